#!/usr/bin/env python3
"""Turns one capture (capture.sh OUT_DIR) into a parser fixture under fixtures/<cli>/<format>/.

    tests/e2e/trim_fixture.py CAPTURE_DIR FIXTURE_DIR CASE [--note TEXT]

Writes FIXTURE_DIR/CASE.txt (stdout) and, when stderr is not empty, CASE.stderr.txt, and records
the exit status, the argv and the note in FIXTURE_DIR/meta.json ({"CASE": {"exit": N, ...}}),
which the parser unit tests read. Trimming only drops what no parser reads: bulky lists in
start-up events (tools, slash commands, skills ...), stack-trace frames on stderr; temporary
paths are rewritten to /tmp/e2e. Every other line is kept byte for byte, in order.
"""
import json
import os
import re
import sys

BULKY_KEYS = {"tools", "slash_commands", "mcp_servers", "agents", "skills", "plugins",
              "output_style", "memory_paths", "supportedNativeDocumentMimeTypes"}


def rewrite_paths(text, root):
    text = text.replace(root, "/tmp/e2e")
    return re.sub(r"/tmp/cap/[A-Za-z0-9_./-]*?/(?=home\.|cwd\.)", "/tmp/e2e/", text)


def trim_event(obj):
    if not isinstance(obj, dict):
        return obj
    t = obj.get("type")
    if t in ("system",) and obj.get("subtype") == "init":
        return {k: v for k, v in obj.items() if k not in BULKY_KEYS}
    if t == "session.skills_loaded":
        obj = dict(obj)
        obj["data"] = {"skills": []}
    return obj


def trim_stdout(text):
    out = []
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("{") and s.endswith("}"):
            try:
                obj = json.loads(s)
            except ValueError:
                out.append(line)
                continue
            trimmed = trim_event(obj)
            out.append(line if trimmed is obj else json.dumps(trimmed, ensure_ascii=False,
                                                              separators=(",", ":")))
        else:
            out.append(line)
    return "\n".join(out)


def trim_stderr(text):
    out, frames = [], 0
    for line in text.split("\n"):
        if re.match(r"^\s+at ", line):
            frames += 1
            if frames > 2:
                continue
        else:
            frames = 0
        out.append(line)
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    note = ""
    if "--note" in args:
        i = args.index("--note")
        note = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    cap, dest, case = args
    root = os.path.abspath(cap)
    os.makedirs(dest, exist_ok=True)
    summary = {}
    with open(os.path.join(cap, "stdout.txt"), encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    with open(os.path.join(cap, "stderr.txt"), encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    with open(os.path.join(dest, case + ".txt"), "w", encoding="utf-8") as f:
        f.write(rewrite_paths(trim_stdout(stdout), root))
    err_path = os.path.join(dest, case + ".stderr.txt")
    if stderr.strip():
        with open(err_path, "w", encoding="utf-8") as f:
            f.write(rewrite_paths(trim_stderr(stderr), root))
    elif os.path.exists(err_path):
        os.remove(err_path)
    meta_path = os.path.join(dest, "meta.json")
    meta = {}
    if os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    run = {}
    for line in open(os.path.join(cap, "summary.json")) if os.path.exists(
            os.path.join(cap, "summary.json")) else []:
        run = json.loads(line)
    argv = json.load(open(os.path.join(cap, "argv.json")))
    entry = {"exit": run.get("exit"), "argv": [rewrite_paths(a, root) for a in argv]}
    if note:
        entry["note"] = note
    meta[case] = entry
    with open(meta_path, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(meta.items())), f, indent=1, ensure_ascii=False)
        f.write("\n")
    summary[case] = entry["exit"]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
