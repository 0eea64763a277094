// Unit tests: brief sections and per-family templates (exec/brief_renderer).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "exec/brief_renderer.h"

using namespace conclave;

namespace {

TEST_CASE("brief rendering: sections, template placeholders and the contract", "[exec]") {
  exec::BriefInput in;
  in.brief = "ROLE: writer\nTASK:\nfix the bug\nDONE: tests pass\n";
  in.hypothesis = "off by one";
  auto sections = exec::ParseBriefSections(in.brief);
  CHECK(sections["ROLE"] == "writer");
  CHECK(sections["TASK"] == "fix the bug");
  CHECK(sections["DONE"] == "tests pass");
  std::string r = exec::RenderTemplate("Goal: {{section:TASK}}\nDone: {{section:DONE}}\n{{contract}}", in);
  CHECK(r.find("Goal: fix the bug") == 0);
  CHECK(r.find("SUMMARY") != std::string::npos);
  std::string plain = exec::RenderBrief("/nonexistent", "", in);
  CHECK(plain.find("HYPOTHESIS: off by one") != std::string::npos);
  CHECK(plain.find("BLOCKERS") != std::string::npos);
}


TEST_CASE("per-family brief templates keep each family's section order", "[exec]") {
  exec::BriefInput in;
  in.brief = "ROLE: worker\nSCOPE: src/parser\nMODE: implement\nTASK: fix the tokenizer\n"
             "DONE: parser tests pass\n";
  in.hypothesis = "quotes are dropped";
  std::string dir = std::string(CONCLAVE_SOURCE_DIR) + "/profiles";
  auto order = [](const std::string& text, std::vector<std::string> marks) {
    size_t at = 0;
    for (const auto& m : marks) {
      size_t p = text.find(m, at);
      if (p == std::string::npos) return false;
      at = p + m.size();
    }
    return true;
  };
  std::string glm = exec::RenderBrief(dir, "glm", in);
  CHECK(order(glm, {"Goal", "fix the tokenizer", "Context", "Constraints", "src/parser", "Done",
                    "parser tests pass"}));
  CHECK(glm.find("【") == std::string::npos);
  std::string ds = exec::RenderBrief(dir, "deepseek", in);
  CHECK(order(ds, {"Задача", "fix the tokenizer", "Где", "src/parser", "Контекст", "Не трогать",
                   "SUMMARY", "【思维模式要求】"}));
  std::string qwen = exec::RenderBrief(dir, "qwen", in);
  CHECK(order(qwen, {"Context", "Objective", "Steps", "Examples", "Response Format", "BLOCKERS"}));
  std::string codex = exec::RenderBrief(dir, "codex", in);
  CHECK(order(codex, {"Goal", "Success", "Context", "Constraints", "Autonomy", "Output", "Stop"}));
  CHECK(codex.find("think step by step") == std::string::npos);
  CHECK(codex.find("【") == std::string::npos);
}

}  // namespace
