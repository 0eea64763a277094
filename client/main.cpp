// conclave: the thin command-line client of conclaved.
// Global flags (--json, --socket) are defined once on the root; every subcommand falls through
// to it, so `conclave status --json`, `conclave --json status` and
// `conclave status --json --socket S` are the same call.
#include <iostream>

#include "commands.h"
#include "completion.h"
#include "conclave_build_info.h"

int main(int argc, char** argv) {
  using namespace conclave::client;
  CLI::App app{
      "conclave: talk to the Conclave daemon (conclaved) - tasks, worker terminals, "
      "dispatches, messages and cross-family reviews"};
  app.name("conclave");
  app.require_subcommand(1);
  app.fallthrough();  // set before the subcommands exist: they inherit it
  app.footer(
      "Global flags go before or after the subcommand.\n"
      "Exit codes: 0 success, 1 error (including the daemon's own refusals, e.g. shutting "
      "down or the store refusing writes), 2 usage, 3 the daemon cannot be reached, 4 wait "
      "timed out with nothing matched, 5 `review gate` found no APPROVED verdict.");
  Options opts;
  app.add_option("--socket", opts.socket,
                 "daemon socket: a path, unix:PATH or tcp:HOST:PORT (default: $CONCLAVE_SOCKET, "
                 "else $XDG_RUNTIME_DIR/conclave/conclave.sock)")
      ->type_name("PATH");
  app.add_flag("--json", opts.json,
               "print one JSON document (JSON lines for watch and read --follow); messages "
               "carry payload (a JSON value) next to payload_json");
  app.set_version_flag("--version", std::string("conclave ") + CONCLAVE_VERSION + " (commit " +
                                        CONCLAVE_GIT_COMMIT + ")");
  app.set_help_all_flag("--help-all", "print the help of every subcommand and exit");
  int rc = kExitOk;
  AddMessagingCommands(app, opts, &rc);
  AddWaitCommands(app, opts, &rc);
  AddTerminalCommands(app, opts, &rc);
  AddTaskCommands(app, opts, &rc);
  AddReviewCommands(app, opts, &rc);
  AddFlowCommands(app, opts, &rc);
  AddCompletionCommand(app, &rc);
  AddManCommandsCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return rc;
}
