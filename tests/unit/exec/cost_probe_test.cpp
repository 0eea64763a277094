// Unit tests: the running-cost probe on a worker's streamed stdout (exec/cost_probe).
#include <catch2/catch.hpp>
#include <string>

#include "exec/cost_probe.h"

using namespace conclave;

TEST_CASE("the cost probe reads cost lines whole or split across chunks", "[exec]") {
  exec::CostProbe p;
  CHECK_FALSE(p.Feed("hello\nconclave-cost-usd: 0.5").has_value());  // not finished yet
  CHECK(p.Feed("0\n") == 0.5);
  CHECK(p.latest() == 0.5);
  CHECK(p.Feed("{\"type\":\"result\",\"total_cost_usd\":1.25}\nmore") == 1.25);
  const std::string line = "{\"type\":\"result\",\"total_cost_usd\":2.75}\n";
  for (char c : line) p.Feed(std::string(1, c));  // "more" + the line: not a cost line
  CHECK(p.latest() == 1.25);
  p.Feed("\n");
  for (char c : line) p.Feed(std::string(1, c));
  CHECK(p.latest() == 2.75);
  CHECK_FALSE(p.Feed("conclave-cost-usd: -3\nconclave-cost-usd: nan\n{\"cost_usd\":\"x\"}\n").has_value());
  CHECK(p.latest() == 2.75);
}

TEST_CASE("a line over 1 MiB reports no cost, and the probe reads the lines after it", "[exec]") {
  exec::CostProbe p;
  // 3 MiB in 64 KiB chunks with no line end, its tail shaped like a cost line.
  std::string chunk(64 << 10, 'x');
  for (int i = 0; i < 47; ++i) CHECK_FALSE(p.Feed(chunk).has_value());
  CHECK_FALSE(p.Feed("conclave-cost-usd: 9\n").has_value());
  CHECK(p.latest() == 0);
  CHECK(p.Feed("conclave-cost-usd: 0.25\n") == 0.25);
  // Just under the limit is still a line.
  exec::CostProbe q;
  std::string big = "{\"total_cost_usd\":3,\"pad\":\"" + std::string((1 << 20) - 64, 'p') + "\"}";
  REQUIRE(big.size() < (1u << 20));
  q.Feed(big.substr(0, 1000));
  CHECK(q.Feed(big.substr(1000) + "\n") == 3);
}

TEST_CASE("a cost line over 1 MiB arriving in one chunk reports no cost either", "[exec]") {
  exec::CostProbe p;
  std::string line = "conclave-cost-usd: 5" + std::string((1 << 20) + 10, ' ') + "\n";
  CHECK(p.Feed(line + "conclave-cost-usd: 0.5\n") == 0.5);  // the next line is read
  CHECK(p.latest() == 0.5);
}
