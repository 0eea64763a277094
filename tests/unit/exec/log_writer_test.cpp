// Unit tests: the log writer (exec/log_writer) runs jobs in the order posted on a thread of its
// own, child_nice nicer than the daemon (the thread that set it); Close runs what is queued
// first, and a job posted after Close runs on the caller's thread.
#include "exec/log_writer.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <future>
#include <thread>
#include <vector>

#include "exec/child_process.h"

using namespace conclave;

namespace {

TEST_CASE("the log writer runs jobs in order off the caller's thread and Close drains them",
          "[exec]") {
  std::vector<int> order;  // written by the writer's thread only, read after Close
  std::vector<std::thread::id> ran_on;
  const auto caller = std::this_thread::get_id();
  std::promise<void> gate;
  std::shared_future<void> held = gate.get_future().share();
  exec::LogWriter writer;
  writer.Post([held] { held.wait(); });  // all that follows queues behind this
  for (int i = 0; i < 1000; ++i) {
    writer.Post([&order, &ran_on, i] {
      order.push_back(i);
      if (i == 0) ran_on.push_back(std::this_thread::get_id());
    });
  }
  gate.set_value();
  writer.Close();  // returns once the 1000 ran
  REQUIRE(order.size() == 1000);
  CHECK(std::is_sorted(order.begin(), order.end()));
  REQUIRE(ran_on.size() == 1);
  CHECK(ran_on[0] != caller);
  std::thread::id late;
  writer.Post([&] { late = std::this_thread::get_id(); });
  CHECK(late == caller);  // closed: run at once, here
}

TEST_CASE("the log writer's thread runs child_nice nicer than the thread that set it",
          "[exec]") {
  errno = 0;
  const int base = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  REQUIRE(errno == 0);
  auto writer_nice = [] {
    exec::LogWriter writer;
    std::promise<int> nice;
    writer.Post([&] { nice.set_value(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()))); });
    return nice.get_future().get();
  };
  exec::SetChildNice(6);
  const int six = writer_nice();
  exec::SetChildNice(19);
  const int capped = writer_nice();
  exec::SetChildNice(0);
  const int none = writer_nice();
  CHECK(six == std::min(base + 6, 19));
  CHECK(capped == 19);
  CHECK(none == base);
  // The test's own thread is left as it was.
  CHECK(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == base);
  // Made by a thread nicer than the one that set child_nice: as nice as the children (6 nicer
  // than the setter), not 6 nicer than its maker — unless its maker is nicer still.
  exec::SetChildNice(6);
  auto made_at = [&](int nice) {
    int got = -100;
    std::thread maker([&] {
      if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice) == 0) got = writer_nice();
    });
    maker.join();
    return got;
  };
  const int from_plus3 = made_at(std::min(base + 3, 19));
  const int from_plus9 = made_at(std::min(base + 9, 19));
  exec::SetChildNice(0);
  CHECK(from_plus3 == std::min(base + 6, 19));
  CHECK(from_plus9 == std::min(base + 9, 19));
}

}  // namespace
