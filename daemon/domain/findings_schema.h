// The JSON Schema of a reviewer's answer ({"findings": [...]}), generated from the one
// definition of the names in findings.h (severities, categories, stances), so the schema a CLI
// is given (claude/qwen `--json-schema`, codex `--output-schema FILE`), the answer format in
// the brief and the parser cannot drift apart. Every property is required and no other is
// allowed (what strict structured-output modes demand); the parser stays the judge of
// validity (ids, lines, duplicates). Pure, thread-compatible.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace conclave::domain {

nlohmann::json FindingsSchema();
// FindingsSchema() as compact JSON text (what ${findings_schema} expands to), built once.
const std::string& FindingsSchemaText();

}  // namespace conclave::domain
