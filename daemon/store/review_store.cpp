#include "store/review_store.h"

#include "store/state_columns.h"

namespace conclave::store {
namespace {

constexpr const char* kReviewCols =
    "id, mode, writer_family, artifact_kind, artifact, artifact_sha, revision, status, verdict, "
    "termination, reason, blocked_by, cap, session, coordinator, COALESCE(idem_key,''), plan, "
    "budget_usd, gate_id, findings, created_ms, updated_ms, max_fix_rounds, fix_rounds, repo, "
    "repo_commit, measure, carried";

ReviewRecord ReadReview(const Statement& st) {
  ReviewRecord r;
  r.id = st.Int(0);
  r.mode = st.Text(1);
  r.writer_family = st.Text(2);
  r.artifact_kind = st.Text(3);
  r.artifact = st.Text(4);
  r.artifact_sha = st.Text(5);
  r.revision = static_cast<int>(st.Int(6));
  r.status = ReviewStatusColumn(st.Text(7));
  r.verdict = st.Text(8);
  r.termination = st.Text(9);
  r.reason = st.Text(10);
  r.blocked_by = st.Text(11);
  r.cap = static_cast<int>(st.Int(12));
  r.session = st.Text(13);
  r.coordinator = st.Text(14);
  r.idem_key = st.Text(15);
  r.plan = st.Text(16);
  r.budget_usd = st.Real(17);
  r.gate_id = st.Int(18);
  r.findings = st.Text(19);
  r.created_ms = st.Int(20);
  r.updated_ms = st.Int(21);
  r.max_fix_rounds = static_cast<int>(st.Int(22));
  r.fix_rounds = static_cast<int>(st.Int(23));
  r.repo = st.Text(24);
  r.repo_commit = st.Text(25);
  r.measure = st.Int(26) != 0;
  r.carried = st.Text(27);
  return r;
}

constexpr const char* kRoundCols =
    "id, review_id, revision, round, role, profile, family, task_id, state, findings, "
    "malformed, error, cost_usd, created_ms, finished_ms, model";

RoundRecordRow ReadRound(const Statement& st) {
  RoundRecordRow r;
  r.id = st.Int(0);
  r.review_id = st.Int(1);
  r.revision = static_cast<int>(st.Int(2));
  r.round = static_cast<int>(st.Int(3));
  r.role = st.Text(4);
  r.profile = st.Text(5);
  r.family = st.Text(6);
  r.task_id = st.Int(7);
  r.state = RoundStateColumn(st.Text(8));
  r.findings = st.Text(9);
  r.malformed = static_cast<int>(st.Int(10));
  r.error = st.Text(11);
  r.cost_usd = st.Real(12);
  r.created_ms = st.Int(13);
  r.finished_ms = st.Int(14);
  r.model = st.Text(15);
  return r;
}

}  // namespace

std::optional<ReviewRecord> ReviewStore::Get(int64_t id) {
  auto st = db_.Prepare(std::string("SELECT ") + kReviewCols + " FROM reviews WHERE id = ?");
  st.Bind(1, id);
  if (!st.Step()) return std::nullopt;
  return ReadReview(st);
}

std::optional<ReviewRecord> ReviewStore::GetByKey(const std::string& key) {
  auto st = db_.Prepare(std::string("SELECT ") + kReviewCols + " FROM reviews WHERE idem_key = ?");
  st.Bind(1, key);
  if (!st.Step()) return std::nullopt;
  return ReadReview(st);
}

int64_t ReviewStore::Insert(const ReviewRecord& r) {
  auto st = db_.Prepare(
      "INSERT INTO reviews(mode, writer_family, artifact_kind, artifact, artifact_sha, revision, "
      "status, verdict, termination, reason, blocked_by, cap, session, coordinator, idem_key, "
      "plan, budget_usd, gate_id, findings, created_ms, updated_ms, max_fix_rounds, fix_rounds, "
      "repo, repo_commit, measure, carried) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.Bind(1, r.mode).Bind(2, r.writer_family).Bind(3, r.artifact_kind).Bind(4, r.artifact);
  st.Bind(5, r.artifact_sha).Bind(6, r.revision).Bind(7, Text(r.status)).Bind(8, r.verdict);
  st.Bind(9, r.termination).Bind(10, r.reason).Bind(11, r.blocked_by).Bind(12, r.cap);
  st.Bind(13, r.session).Bind(14, r.coordinator);
  if (r.idem_key.empty()) st.BindNull(15); else st.Bind(15, r.idem_key);
  st.Bind(16, r.plan).Bind(17, r.budget_usd).Bind(18, r.gate_id).Bind(19, r.findings);
  st.Bind(20, r.created_ms).Bind(21, r.updated_ms).Bind(22, r.max_fix_rounds);
  st.Bind(23, r.fix_rounds).Bind(24, r.repo).Bind(25, r.repo_commit);
  st.Bind(26, static_cast<int64_t>(r.measure ? 1 : 0)).Bind(27, r.carried);
  st.Run();
  return db_.LastInsertId();
}

void ReviewStore::Update(const ReviewRecord& r) {
  auto st = db_.Prepare(
      "UPDATE reviews SET artifact=?, artifact_sha=?, revision=?, status=?, verdict=?, "
      "termination=?, reason=?, blocked_by=?, plan=?, gate_id=?, findings=?, updated_ms=?, "
      "max_fix_rounds=?, fix_rounds=?, carried=? WHERE id=?");
  st.Bind(1, r.artifact).Bind(2, r.artifact_sha).Bind(3, r.revision).Bind(4, Text(r.status));
  st.Bind(5, r.verdict).Bind(6, r.termination).Bind(7, r.reason).Bind(8, r.blocked_by);
  st.Bind(9, r.plan).Bind(10, r.gate_id).Bind(11, r.findings).Bind(12, r.updated_ms);
  st.Bind(13, r.max_fix_rounds).Bind(14, r.fix_rounds).Bind(15, r.carried).Bind(16, r.id);
  st.Run();
}

std::vector<ReviewRecord> ReviewStore::List(int limit, int64_t since_ms) {
  auto st = db_.Prepare(std::string("SELECT ") + kReviewCols +
                        " FROM reviews WHERE created_ms >= ? ORDER BY id DESC LIMIT ?");
  st.Bind(1, since_ms).Bind(2, static_cast<int64_t>(limit));
  std::vector<ReviewRecord> out;
  while (st.Step()) out.push_back(ReadReview(st));
  return out;
}

std::vector<ReviewRecord> ReviewStore::Running() {
  auto st = db_.Prepare(std::string("SELECT ") + kReviewCols +
                        " FROM reviews INDEXED BY reviews_running WHERE status = 'running' "
                        "ORDER BY id");
  std::vector<ReviewRecord> out;
  while (st.Step()) out.push_back(ReadReview(st));
  return out;
}

int64_t ReviewStore::InsertRound(const RoundRecordRow& r) {
  auto st = db_.Prepare(
      "INSERT INTO review_rounds(review_id, revision, round, role, profile, family, task_id, "
      "state, findings, malformed, error, cost_usd, created_ms, finished_ms, model) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.Bind(1, r.review_id).Bind(2, r.revision).Bind(3, r.round).Bind(4, r.role);
  st.Bind(5, r.profile).Bind(6, r.family).Bind(7, r.task_id).Bind(8, Text(r.state));
  st.Bind(9, r.findings).Bind(10, r.malformed).Bind(11, r.error).Bind(12, r.cost_usd);
  st.Bind(13, r.created_ms).Bind(14, r.finished_ms).Bind(15, r.model);
  st.Run();
  return db_.LastInsertId();
}

void ReviewStore::UpdateRound(const RoundRecordRow& r) {
  auto st = db_.Prepare(
      "UPDATE review_rounds SET task_id=?, state=?, findings=?, malformed=?, error=?, "
      "cost_usd=?, finished_ms=?, model=? WHERE id=?");
  st.Bind(1, r.task_id).Bind(2, Text(r.state)).Bind(3, r.findings).Bind(4, r.malformed);
  st.Bind(5, r.error).Bind(6, r.cost_usd).Bind(7, r.finished_ms).Bind(8, r.model).Bind(9, r.id);
  st.Run();
}

std::vector<RoundRecordRow> ReviewStore::Rounds(int64_t review_id) {
  auto st = db_.Prepare(std::string("SELECT ") + kRoundCols +
                        " FROM review_rounds WHERE review_id = ? ORDER BY revision, round, id");
  st.Bind(1, review_id);
  std::vector<RoundRecordRow> out;
  while (st.Step()) out.push_back(ReadRound(st));
  return out;
}

std::optional<RoundRecordRow> ReviewStore::RoundForTask(int64_t task_id) {
  auto st = db_.Prepare(std::string("SELECT ") + kRoundCols +
                        " FROM review_rounds WHERE task_id = ? ORDER BY id DESC LIMIT 1");
  st.Bind(1, task_id);
  if (!st.Step()) return std::nullopt;
  return ReadRound(st);
}

bool ReviewStore::ClaimStrongSession(const std::string& session, int64_t review_id,
                                     int64_t now_ms) {
  db_.Prepare("INSERT OR IGNORE INTO strong_sessions(session, review_id, created_ms) VALUES (?,?,?)")
      .Bind(1, session)
      .Bind(2, review_id)
      .Bind(3, now_ms)
      .Run();
  return db_.Changes() == 1;
}

}  // namespace conclave::store

namespace conclave::store {

int64_t ReviewStore::InsertSignoff(const domain::Signoff& s) {
  auto st = db_.Prepare(
      "INSERT INTO review_signoffs(review_id, revision, gate_id, caller_uid, caller_pid, "
      "caller_exe, caller_tty, caller_source, human, decision, reason, verdict_before, "
      "verdict_after, created_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.Bind(1, s.review_id).Bind(2, s.revision).Bind(3, s.gate_id).Bind(4, s.caller.uid);
  st.Bind(5, s.caller.pid).Bind(6, s.caller.exe).Bind(7, s.caller.tty).Bind(8, s.caller.source);
  st.Bind(9, static_cast<int64_t>(s.human ? 1 : 0)).Bind(10, s.decision).Bind(11, s.reason);
  st.Bind(12, s.verdict_before).Bind(13, s.verdict_after).Bind(14, s.created_ms);
  st.Run();
  return db_.LastInsertId();
}

std::vector<domain::Signoff> ReviewStore::Signoffs(int64_t review_id) {
  auto st = db_.Prepare(
      "SELECT id, review_id, revision, gate_id, caller_uid, caller_pid, caller_exe, caller_tty, "
      "caller_source, human, decision, reason, verdict_before, verdict_after, created_ms "
      "FROM review_signoffs WHERE review_id = ? ORDER BY id");
  st.Bind(1, review_id);
  std::vector<domain::Signoff> out;
  while (st.Step()) {
    domain::Signoff s;
    s.id = st.Int(0);
    s.review_id = st.Int(1);
    s.revision = static_cast<int>(st.Int(2));
    s.gate_id = st.Int(3);
    s.caller.uid = st.Int(4);
    s.caller.pid = st.Int(5);
    s.caller.exe = st.Text(6);
    s.caller.tty = st.Text(7);
    s.caller.source = st.Text(8);
    s.human = st.Int(9) != 0;
    s.decision = st.Text(10);
    s.reason = st.Text(11);
    s.verdict_before = st.Text(12);
    s.verdict_after = st.Text(13);
    s.created_ms = st.Int(14);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace conclave::store
