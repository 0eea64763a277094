// conclave: the thin command-line client of conclaved.
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  using namespace conclave::client;
  CLI::App app{"conclave — talk to the Conclave daemon (conclaved)"};
  app.require_subcommand(1);
  Options opts;
  app.add_option("--socket", opts.socket, "daemon socket (default: $CONCLAVE_SOCKET or XDG path)");
  app.add_flag("--json", opts.json, "print one JSON document (JSON lines for watch)");
  app.set_version_flag("--version", std::string(CONCLAVE_VERSION));
  int rc = kExitOk;
  AddMessagingCommands(app, opts, &rc);
  AddTaskCommands(app, opts, &rc);
  AddReviewCommands(app, opts, &rc);
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
