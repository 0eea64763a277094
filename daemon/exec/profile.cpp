#include "exec/profile.h"

#include "exec/brief_renderer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace conclave::exec {
namespace fs = std::filesystem;

const Profile* ProfileSet::Find(const std::string& name) const {
  for (const auto& p : profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool LooksLikeSecretName(const std::string& name) {
  std::string u = name;
  std::transform(u.begin(), u.end(), u.begin(), ::toupper);
  for (const char* marker : {"KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CREDENTIAL"}) {
    if (u.find(marker) != std::string::npos) return true;
  }
  return false;
}

namespace {

Status FieldError(std::string* bad_field, const std::string& field, const std::string& msg) {
  if (bad_field) *bad_field = field;
  return InvalidArgument(field + ": " + msg);
}

bool IsStringArray(const nlohmann::json& j) {
  if (!j.is_array()) return false;
  return std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_string(); });
}

bool IsStringMap(const nlohmann::json& j) {
  if (!j.is_object()) return false;
  return std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_string(); });
}

}  // namespace

StatusOr<Profile> ParseProfile(const nlohmann::json& j, const std::string& file,
                               std::string* bad_field) {
  Profile p;
  p.source_file = file;
  if (!j.is_object()) return FieldError(bad_field, "(root)", "a profile must be a JSON object");
  auto str = [&](const char* key, std::string& out, bool required) -> Status {
    if (!j.contains(key)) {
      return required ? FieldError(bad_field, key, "is required") : Status::Ok();
    }
    if (!j[key].is_string()) return FieldError(bad_field, key, "must be a string");
    out = j[key].get<std::string>();
    return Status::Ok();
  };
  auto num = [&](const char* key, int& out, int min) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_number_integer()) return FieldError(bad_field, key, "must be an integer");
    if (j[key].get<double>() > std::numeric_limits<int>::max()) {
      return FieldError(bad_field, key, "must be at most " +
                                            std::to_string(std::numeric_limits<int>::max()));
    }
    if (j[key].get<double>() < min) {
      return FieldError(bad_field, key, "must be at least " + std::to_string(min));
    }
    out = j[key].get<int>();
    if (out < min) {
      return FieldError(bad_field, key, "must be at least " + std::to_string(min));
    }
    return Status::Ok();
  };
  auto arr = [&](const char* key, std::vector<std::string>& out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!IsStringArray(j[key])) return FieldError(bad_field, key, "must be an array of strings");
    out = j[key].get<std::vector<std::string>>();
    return Status::Ok();
  };
  auto map = [&](const char* key, std::map<std::string, std::string>& out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!IsStringMap(j[key])) {
      return FieldError(bad_field, key, "must be an object of string values");
    }
    out = j[key].get<std::map<std::string, std::string>>();
    return Status::Ok();
  };
  for (Status s : {str("name", p.name, true), str("family", p.family, true),
                   str("type", p.type, false), str("brief", p.brief, false),
                   str("parser", p.parser, false), str("template", p.template_name, false),
                   str("version_command", p.version_command, false), arr("command", p.command),
                   str("workdir", p.workdir, false),
                   arr("budget_flag", p.budget_flag), arr("review_args", p.review_args),
                   arr("inherit_env", p.inherit_env), arr("home_files", p.home_files),
                   str("sandbox", p.sandbox, false),
                   arr("schema_args", p.schema_args), arr("readonly_args", p.readonly_args),
                   str("brief_large", p.brief_large, false),
                   arr("brief_large_args", p.brief_large_args),
                   map("env", p.env), map("files", p.files), num("timeout_s", p.timeout_s, 1),
                   num("idle_timeout_s", p.idle_timeout_s, 0),
                   num("max_concurrent", p.max_concurrent, 1)}) {
    if (!s.ok()) return s;
  }
  if (j.contains("isolate_home")) {
    if (!j["isolate_home"].is_boolean()) {
      return FieldError(bad_field, "isolate_home", "must be true or false");
    }
    p.isolate_home = j["isolate_home"].get<bool>();
  }
  if (j.contains("trust_reported_cost")) {
    if (!j["trust_reported_cost"].is_boolean()) {
      return FieldError(bad_field, "trust_reported_cost", "must be true or false");
    }
    p.trust_reported_cost = j["trust_reported_cost"].get<bool>();
  }
  if (j.contains("contract")) {
    if (!j["contract"].is_boolean()) return FieldError(bad_field, "contract", "must be true or false");
    p.contract = j["contract"].get<bool>();
  }
  if (j.contains("price")) {
    auto prices = domain::ParsePriceTable(j["price"]);
    if (!prices.ok()) {
      if (bad_field) *bad_field = "price";
      return prices.status();  // names the key, e.g. "price.input_per_mtok: not a number"
    }
    p.price = prices.value();
  }
  if (p.name.empty() || p.name.size() > 64 ||
      p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos) {
    return FieldError(bad_field, "name", "must be 1-64 characters of letters, digits, . _ -");
  }
  if (p.family.empty()) return FieldError(bad_field, "family", "must not be empty");
  if (p.type != "cli" && p.type != "command") {
    return FieldError(bad_field, "type", "must be \"cli\" or \"command\"");
  }
  if (p.command.empty()) return FieldError(bad_field, "command", "must name a program");
  if (p.workdir != "terminal" && p.workdir != "dispatch") {
    return FieldError(bad_field, "workdir", "must be \"terminal\" or \"dispatch\"");
  }
  if (!p.sandbox.empty() && p.sandbox != "bwrap") {
    return FieldError(bad_field, "sandbox", "must be \"bwrap\" (or absent)");
  }
  for (const auto& f : p.home_files) {
    if (f.rfind("~/", 0) != 0 || f.find("..") != std::string::npos) {
      return FieldError(bad_field, "home_files", "'" + f + "' must be a path under ~/ without ..");
    }
  }
  if (p.brief != "stdin" && p.brief != "arg") {
    return FieldError(bad_field, "brief", "must be \"stdin\" or \"arg\"");
  }
  if (!p.brief_large.empty()) {
    if (p.brief_large != "stdin" && p.brief_large != "args") {
      return FieldError(bad_field, "brief_large", "must be \"stdin\" or \"args\"");
    }
    if (p.brief != "arg") {
      return FieldError(bad_field, "brief_large", "only applies when \"brief\" is \"arg\"");
    }
  }
  if (p.brief_large == "args") {
    bool names_file = std::any_of(p.brief_large_args.begin(), p.brief_large_args.end(),
                                  [](const std::string& a) {
                                    return a.find("${BRIEF_FILE}") != std::string::npos;
                                  });
    if (!names_file) {
      return FieldError(bad_field, "brief_large_args",
                        "must name the brief file with ${BRIEF_FILE} when brief_large is \"args\"");
    }
  } else if (!p.brief_large_args.empty()) {
    return FieldError(bad_field, "brief_large_args", "only applies when brief_large is \"args\"");
  }
  return p;
}

StatusOr<BriefDelivery> PlanBriefDelivery(const Profile& p, size_t brief_bytes) {
  if (p.brief != "arg") return BriefDelivery::kStdin;
  if (brief_bytes <= kMaxArgBriefBytes) return BriefDelivery::kArg;
  if (p.brief_large == "stdin") return BriefDelivery::kStdin;
  if (p.brief_large == "args") return BriefDelivery::kLargeArgs;
  return FailedPrecondition("brief: " + std::to_string(brief_bytes) + " bytes is more than the " +
                            std::to_string(kMaxArgBriefBytes) + " an argument may carry, and profile " +
                            p.name + " (" + p.source_file +
                            ") takes the brief as an argument with no \"brief_large\"");
}

StatusOr<Profile> LoadProfileFromJson(std::string_view text, const std::string& file,
                                      std::string* bad_field) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    if (bad_field) bad_field->clear();
    return InvalidArgument(std::string("not valid JSON: ") + e.what());
  }
  return ParseProfile(j, file, bad_field);
}

ProfileSet LoadProfiles(const std::string& dir) {
  ProfileSet set;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    set.errors.push_back({dir, "", "profiles directory does not exist"});
    return set;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string field;
    auto p = LoadProfileFromJson(ss.str(), f.string(), &field);
    if (!p.ok()) {
      set.errors.push_back({f.string(), field, p.status().message()});
      continue;
    }
    if (set.Find(p->name)) {
      set.errors.push_back({f.string(), "name", "duplicate profile name '" + p->name + "'"});
      continue;
    }
    // Rendering a brief must not read the template from disk per dispatch.
    p->template_text = ReadBriefTemplate(dir, p->template_name);
    set.profiles.push_back(std::move(p.value()));
  }
  std::sort(set.profiles.begin(), set.profiles.end(),
            [](const Profile& a, const Profile& b) { return a.name < b.name; });
  return set;
}

StatusOr<Resolved> ResolveTemplate(const std::string& text, const std::string& key,
                                   const TemplateContext& ctx) {
  Resolved r;
  bool key_secret = LooksLikeSecretName(key);
  size_t i = 0;
  while (i < text.size()) {
    size_t start = text.find("${", i);
    if (start == std::string::npos) {
      r.value += text.substr(i);
      break;
    }
    r.value += text.substr(i, start - i);
    // The matching '}': a default may itself hold references (${env:X:-${HOME}/.cache}).
    size_t end = start + 2;
    for (int depth = 1; end < text.size(); ++end) {
      if (text.compare(end, 2, "${") == 0) {
        ++depth;
        ++end;
      } else if (text[end] == '}' && --depth == 0) {
        break;
      }
    }
    if (end >= text.size()) {
      return InvalidArgument(key + ": unterminated ${ in template");
    }
    std::string ref = text.substr(start + 2, end - start - 2);
    std::string value;
    bool secret = false;
    if (ref.rfind("env:", 0) == 0) {
      std::string name = ref.substr(4);
      std::string fallback;
      bool has_fallback = false;
      if (auto d = name.find(":-"); d != std::string::npos) {
        fallback = name.substr(d + 2);
        name = name.substr(0, d);
        has_fallback = true;
      }
      auto it = ctx.environ ? ctx.environ->find(name) : decltype(ctx.environ->end()){};
      if (ctx.environ && it != ctx.environ->end() && !it->second.empty()) {
        value = it->second;
        secret = key_secret || LooksLikeSecretName(name);
      } else if (has_fallback) {
        auto inner = ResolveTemplate(fallback, key, ctx);
        if (!inner.ok()) return inner.status();
        value = inner->value;
        r.secrets.insert(r.secrets.end(), inner->secrets.begin(), inner->secrets.end());
      } else {
        return FailedPrecondition(key + ": environment variable " + name +
                                  " is not set (referenced as ${env:" + name + "})");
      }
    } else if (ref.rfind("file:", 0) == 0) {
      std::string path = ref.substr(5);
      std::ifstream in(path);
      if (!in) return FailedPrecondition(key + ": cannot read " + path + " (${file:...})");
      std::stringstream ss;
      ss << in.rdbuf();
      value = ss.str();
      while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
      secret = true;
    } else {
      auto it = ctx.vars.find(ref);
      if (it == ctx.vars.end()) {
        return InvalidArgument(key + ": unknown template reference ${" + ref + "}");
      }
      value = it->second;
    }
    if (secret && value.size() >= 4) r.secrets.push_back(value);
    r.value += value;
    i = end + 1;
  }
  return r;
}

}  // namespace conclave::exec
