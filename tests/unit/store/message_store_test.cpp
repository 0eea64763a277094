// Unit tests: the message log — cursors, filters, unread (store/message_store).
#include <catch2/catch.hpp>

#include "store/message_store.h"
#include "store/migrations.h"
#include "temp_db.h"

namespace conclave {
namespace {
using testing::Msg;
using testing::TempDb;

TEST_CASE("cursors: seq grows monotonically and After() resumes exactly", "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  std::vector<int64_t> seqs;
  for (int i = 0; i < 10; ++i) {
    auto m = Msg(i % 2 ? "a" : "b", i % 3 ? "status" : "question", i % 4);
    ms.Insert(m);
    seqs.push_back(m.seq);
  }
  for (size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i] > seqs[i - 1]);
  CHECK(ms.LastSeq() == seqs.back());
  domain::MessageFilter all;
  auto rest = ms.After(all, seqs[4], 100);
  REQUIRE(rest.size() == 5);
  CHECK(rest.front().seq == seqs[5]);
  // The SQL filter and the in-memory filter agree on every message and filter.
  std::vector<domain::MessageFilter> filters(4);
  filters[1].to = "a";
  filters[2].types = {"question"};
  filters[3].task_ids = {1, 3};
  auto everything = ms.After(all, 0, 100);
  for (const auto& f : filters) {
    auto sql = ms.After(f, 0, 100);
    size_t expected = 0;
    for (const auto& m : everything) expected += f.Matches(m) ? 1 : 0;
    CHECK(sql.size() == expected);
    for (const auto& m : sql) CHECK(f.Matches(m));
  }
  // The high-water mark survives deleting rows.
  t.db->Exec("DELETE FROM messages");
  CHECK(ms.LastSeq() == seqs.back());
}

TEST_CASE("TakeUnread marks read unless peeking", "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  auto a = Msg("h", "status");
  auto b = Msg("h", "question");
  ms.Insert(a);
  ms.Insert(b);
  CHECK(ms.TakeUnread("h", {}, 10, true).size() == 2);
  CHECK(ms.TakeUnread("h", {"question"}, 10, false).size() == 1);
  CHECK(ms.TakeUnread("h", {}, 10, false).size() == 1);
  CHECK(ms.TakeUnread("h", {}, 10, false).empty());
}

}  // namespace
}  // namespace conclave
