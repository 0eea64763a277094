// `conclave man-commands` (hidden): the COMMANDS section of conclave(1), in help2man include
// format, generated from the CLI11 command tree so the man page lists every command with all
// of its options (CLI11's --help-all stops one level down). The build runs it and hands the
// result to help2man with --include.
#include <iostream>
#include <sstream>

#include "completion.h"

namespace conclave::client {
namespace {

// Escapes text for roff: backslashes, hyphens, and a leading control character.
std::string Roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c != '\n') {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

void Describe(const CLI::App* app, const std::string& path, std::ostringstream& s) {
  auto subs = app->get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); });
  if (subs.empty() || path == "conclave") {
    if (path != "conclave") {
      std::string synopsis = path;
      for (const auto* o : app->get_options()) {
        if (!o->get_positional()) continue;
        synopsis += o->get_required() ? " " + o->get_name(true) : " [" + o->get_name(true) + "]";
      }
      s << ".TP\n.B " << Roff(synopsis) << "\n" << Roff(app->get_description()) << "\n";
      bool any = false;
      for (const auto* o : app->get_options()) {
        if (o->get_lnames().empty() && o->get_snames().empty()) continue;
        const auto& l = o->get_lnames();
        if (l == std::vector<std::string>{"help"} || l == std::vector<std::string>{"help-all"}) {
          continue;
        }
        if (!any) s << ".RS\n";
        any = true;
        std::string name = o->get_name(false, true);  // e.g. "--dispatch" or "-h,--help"
        if (o->get_expected_max() > 0) name += " " + o->get_type_name();
        s << ".TP\n.B " << Roff(name) << "\n"
          << Roff(o->get_description() + (o->get_required() ? " (required)" : "")) << "\n";
      }
      if (any) s << ".RE\n";
    }
  }
  for (const auto* c : subs) Describe(c, path + " " + c->get_name(), s);
}

}  // namespace

void AddManCommandsCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("man-commands", "");
  cmd->group("");  // hidden: for the build's man page, not for people
  CLI::App* root = &app;
  cmd->callback([root] {
    std::ostringstream s;
    s << "[COMMANDS]\nEvery command also takes the global flags \\fB\\-\\-json\\fR and "
         "\\fB\\-\\-socket\\fR \\fIPATH\\fR, before or after the command.\n";
    Describe(root, "conclave", s);
    std::cout << s.str();
  });
}

}  // namespace conclave::client
