#include "engine/jobs/job_table.h"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>

#include "engine/core/error.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/row_codec.h"
#include "engine/jobs/sqlite_db.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

// Sorting by text compares this many leading characters: enough to order what a person reads in
// a table cell, and it keeps the sorter's records small on long prompts and outputs.
constexpr int kSortPrefixChars = 64;

// In WAL mode SQLite empties a connection's page cache whenever another connection commits, so
// while a job runs every read would copy pages in again. Mapped pages need no copy: COUNT(*) over
// 100k rows takes 0.6 ms instead of 14 ms (scans gain less; the search is byte work). The mapping
// is only address space; the pages are the OS's file cache.
constexpr int64_t kMmapBytes = int64_t{1} << 30;

constexpr const char* kContainsFunction = "sluice_contains";
constexpr const char* kOutputsContainFunction = "sluice_outputs_contain";
constexpr const char* kSample0Function = "sluice_sample0";
constexpr const char* kRowValidityFunction = "sluice_row_validity";
constexpr const char* kSampleTokensFunction = "sluice_sample_tokens";
constexpr const char* kLongestOutputFunction = "sluice_longest_output";

// The columns read into a RowSummary, in the order read_summary reads them.
constexpr const char* kSummaryColumns =
    "rows.row_index, rows.status, json_extract(rows.input, '$.id'), "
    "substr(rows.prompt, 1, ?), substr(json_extract(rows.samples, '$[0].output'), 1, ?), "
    "substr(rows.error, 1, ?), rows.prompt_tokens, "
    "json_extract(rows.samples, '$[0].output_tokens'), json_array_length(rows.samples), "
    "rows.total_ms, json_extract(rows.samples, '$[0].finish_reason'), "
    "sluice_row_validity(rows.samples), sluice_sample_tokens(rows.samples)";

using SqlValue = std::variant<int64_t, std::string>;

// A piece of SQL with the values of its `?` parameters, in order.
struct SqlClause {
  std::string sql;
  std::vector<SqlValue> values;
};

// ---- search: a scan of every row's text, so it is plain byte work (memchr finds candidates)

unsigned char fold_ascii(unsigned char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c + ('a' - 'A')) : c;
}

std::string fold_ascii(std::string_view text) {
  std::string folded(text);
  for (char& c : folded) c = static_cast<char>(fold_ascii(static_cast<unsigned char>(c)));
  return folded;
}

bool equals_folded(const char* text, std::string_view folded) {
  for (size_t i = 0; i < folded.size(); ++i) {
    if (fold_ascii(static_cast<unsigned char>(text[i])) != static_cast<unsigned char>(folded[i]))
      return false;
  }
  return true;
}

// Returns true when haystack contains needle with ASCII letters folded. Precondition: needle is
// folded. Candidates are found by memchr on the first byte in both cases (glibc's is vectorized).
bool contains_folded(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  if (haystack.size() < needle.size()) return false;
  const auto lower = static_cast<unsigned char>(needle[0]);
  const unsigned char upper = (lower >= 'a' && lower <= 'z') ? lower - ('a' - 'A') : lower;
  const char* const end = haystack.data() + (haystack.size() - needle.size()) + 1;  // of starts
  const auto find = [end](const char* from, unsigned char c) {
    return static_cast<const char*>(std::memchr(from, c, static_cast<size_t>(end - from)));
  };
  const char* next_lower = find(haystack.data(), lower);
  const char* next_upper = upper != lower ? find(haystack.data(), upper) : nullptr;
  while (next_lower != nullptr || next_upper != nullptr) {
    const bool is_lower =
        next_upper == nullptr || (next_lower != nullptr && next_lower < next_upper);
    const char* start = is_lower ? next_lower : next_upper;
    if (equals_folded(start + 1, needle.substr(1))) return true;
    if (is_lower) {
      next_lower = start + 1 < end ? find(start + 1, lower) : nullptr;
    } else {
      next_upper = start + 1 < end ? find(start + 1, upper) : nullptr;
    }
  }
  return false;
}

// Returns the offset of the quote that closes the JSON string opened before `from`, or npos.
size_t find_string_end(std::string_view json, size_t from) {
  while (true) {
    const size_t quote = json.find('"', from);
    if (quote == std::string_view::npos) return quote;
    size_t num_backslashes = 0;
    while (quote - num_backslashes > from && json[quote - num_backslashes - 1] == '\\')
      ++num_backslashes;
    if (num_backslashes % 2 == 0) return quote;
    from = quote + 1;
  }
}

size_t skip_json_space(std::string_view json, size_t from) {
  while (from < json.size() &&
         (json[from] == ' ' || json[from] == '\t' || json[from] == '\r' || json[from] == '\n')) {
    ++from;
  }
  return from;
}

// True when the JSON string literal body (between its quotes) holds needle once decoded.
bool string_literal_contains(std::string_view body, std::string_view needle) {
  if (body.find('\\') == std::string_view::npos) return contains_folded(body, needle);
  const auto decoded =
      nlohmann::json::parse(str_cat('"', body, '"'), nullptr, /*allow_exceptions=*/false);
  return decoded.is_string() && contains_folded(decoded.get_ref<const std::string&>(), needle);
}

// True when some sample's "output" in the samples JSON array holds needle. The JSON is walked
// token by token (strings skipped with memchr, no tree built); only the string values of
// "output" keys in the array's objects are searched, never keys, numbers or "extra".
bool outputs_contain(std::string_view samples, std::string_view needle) {
  int depth = 0;
  bool is_output_value_next = false;
  for (size_t i = 0; i < samples.size(); ++i) {
    const char c = samples[i];
    if (c == '"') {
      const size_t end = find_string_end(samples, i + 1);
      if (end == std::string_view::npos) return false;  // malformed: no match rather than a guess
      const std::string_view body = samples.substr(i + 1, end - i - 1);
      const size_t next = skip_json_space(samples, end + 1);
      if (next < samples.size() && samples[next] == ':') {
        is_output_value_next = depth == 2 && body == "output";
      } else if (is_output_value_next && depth == 2 && string_literal_contains(body, needle)) {
        return true;
      }
      i = end;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// Returns the offset of the value when the JSON string literal samples[start..end] (its quotes
// included) is key of a sample object (an object at depth 2 of the samples array), else npos.
size_t sample_key_value(std::string_view samples, size_t start, size_t end, int depth,
                        std::string_view key) {
  if (depth != 2 || samples.substr(start + 1, end - start - 1) != key)
    return std::string_view::npos;
  const size_t colon = skip_json_space(samples, end + 1);
  if (colon >= samples.size() || samples[colon] != ':') return std::string_view::npos;
  return skip_json_space(samples, colon + 1);
}

// Returns the JSON text of key's value in the samples array's first object (a string literal with
// its quotes, or a number), or nullopt. Walks as outputs_contain does and stops at the end of
// that object: the keys come before the token ids, so this reads little more than the output.
std::optional<std::string_view> sample0_value(std::string_view samples, std::string_view key) {
  int depth = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const char c = samples[i];
    if (c == '"') {
      const size_t end = find_string_end(samples, i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      const size_t value = sample_key_value(samples, i, end, depth, key);
      if (value == std::string_view::npos) {
        i = end;
        continue;
      }
      if (value < samples.size() && samples[value] == '"') {
        const size_t value_end = find_string_end(samples, value + 1);
        if (value_end == std::string_view::npos) return std::nullopt;
        return samples.substr(value, value_end - value + 1);
      }
      size_t value_end = value;
      while (value_end < samples.size() && samples[value_end] != ',' && samples[value_end] != '}' &&
             samples[value_end] != ']') {
        ++value_end;
      }
      return samples.substr(value, value_end - value);
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth < 2) {
      return std::nullopt;  // the first sample ended (or there is none)
    }
  }
  return std::nullopt;
}

// Returns the row's validity (row_validity's rule) from its samples JSON array: each sample
// object's "valid" key holds true or false when it was judged. Walks as outputs_contain does; a
// malformed array has no verdict.
RowValidity samples_validity(std::string_view samples) {
  int depth = 0;
  size_t num_samples = 0;
  size_t num_judged_valid = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const char c = samples[i];
    if (c == '"') {
      const size_t end = find_string_end(samples, i + 1);
      if (end == std::string_view::npos) return RowValidity::Unknown;
      const size_t value = sample_key_value(samples, i, end, depth, "valid");
      i = end;
      if (value == std::string_view::npos) continue;
      if (samples.substr(value).starts_with("false")) return RowValidity::Invalid;
      if (samples.substr(value).starts_with("true")) ++num_judged_valid;
    } else if (c == '{' || c == '[') {
      if (depth++ == 1) ++num_samples;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  const bool is_all_valid = num_samples > 0 && num_judged_valid == num_samples;
  return is_all_valid ? RowValidity::Valid : RowValidity::Unknown;
}

// Returns each sample's output_tokens from the samples JSON array, in order (0 for a sample
// without an integer there; empty for a malformed array). Walks as samples_validity does.
std::vector<int64_t> samples_output_tokens(std::string_view samples) {
  std::vector<int64_t> tokens;
  int depth = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const char c = samples[i];
    if (c == '"') {
      const size_t end = find_string_end(samples, i + 1);
      if (end == std::string_view::npos) return {};
      const size_t value = sample_key_value(samples, i, end, depth, "output_tokens");
      i = end;
      if (value == std::string_view::npos || tokens.empty()) continue;
      int64_t number = 0;
      const auto parsed =
          std::from_chars(samples.data() + value, samples.data() + samples.size(), number);
      if (parsed.ec == std::errc()) tokens.back() = number;
    } else if (c == '{' || c == '[') {
      if (depth++ == 1) tokens.push_back(0);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return tokens;
}

// True when JSON text spells c differently from c itself (row_codec's to_json_text escapes only
// the quote, the backslash and control characters).
bool is_json_escaped(char c) {
  return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
}

std::string_view text_arg(sqlite3_value* value) {
  // sqlite3_value_text before sqlite3_value_bytes: the text conversion can change the length.
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_value_bytes(value))};
}

// sluice_contains(text, folded_needle). LIKE would also fold ASCII only, but needs its wildcards
// escaped and decodes the text a character at a time.
void contains_function(sqlite3_context* context, int /*num_args*/, sqlite3_value** args) {
  const bool is_match = contains_folded(text_arg(args[0]), text_arg(args[1]));
  sqlite3_result_int(context, is_match ? 1 : 0);
}

// sluice_outputs_contain(samples_json, folded_needle). When the needle holds nothing JSON
// escapes, an output holding it puts it verbatim in the JSON text, so a raw scan rules out most
// rows before the walk over the JSON.
void outputs_contain_function(sqlite3_context* context, int /*num_args*/, sqlite3_value** args) {
  const std::string_view samples = text_arg(args[0]);
  const std::string_view needle = text_arg(args[1]);
  const bool can_prefilter = std::none_of(needle.begin(), needle.end(), is_json_escaped);
  const bool is_match =
      (!can_prefilter || contains_folded(samples, needle)) && outputs_contain(samples, needle);
  sqlite3_result_int(context, is_match ? 1 : 0);
}

// sluice_sample0(samples_json, key): what json_extract(samples, '$[0].' || key) gives for the
// strings and numbers of a sample (text, integer or real; NULL otherwise), without parsing the
// whole array: sorting 100k rows by output tokens reads each row's samples once.
void sample0_function(sqlite3_context* context, int /*num_args*/, sqlite3_value** args) {
  const auto raw = sample0_value(text_arg(args[0]), text_arg(args[1]));
  if (!raw || raw->empty()) return sqlite3_result_null(context);
  if (raw->front() == '"') {
    const std::string_view body = raw->substr(1, raw->size() - 2);
    if (body.find('\\') == std::string_view::npos)
      return sqlite3_result_text64(context, body.data(), body.size(), SQLITE_TRANSIENT,
                                   SQLITE_UTF8);
    const auto decoded = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
    if (!decoded.is_string()) return sqlite3_result_null(context);
    const auto& text = decoded.get_ref<const std::string&>();
    return sqlite3_result_text64(context, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  }
  const char* const first = raw->data();
  const char* const last = raw->data() + raw->size();
  int64_t integer = 0;
  if (const auto parsed = std::from_chars(first, last, integer);
      parsed.ec == std::errc() && parsed.ptr == last) {
    return sqlite3_result_int64(context, integer);
  }
  double number = 0.0;
  if (const auto parsed = std::from_chars(first, last, number);
      parsed.ec == std::errc() && parsed.ptr == last) {
    return sqlite3_result_double(context, number);
  }
  sqlite3_result_null(context);  // true, false, null, an array or an object
}

// sluice_row_validity(samples_json): 0 for an invalid row, 1 for a valid one, NULL without a
// verdict (samples_validity), so that SQL sorts and filters rows as row_validity judges them.
void row_validity_function(sqlite3_context* context, int /*num_args*/, sqlite3_value** args) {
  const RowValidity validity = samples_validity(text_arg(args[0]));
  if (validity == RowValidity::Unknown) return sqlite3_result_null(context);
  sqlite3_result_int(context, validity == RowValidity::Valid ? 1 : 0);
}

// sluice_sample_tokens(samples_json): every sample's output tokens as "212,187" (RowSummary's
// sample_output_tokens), "" without samples.
void sample_tokens_function(sqlite3_context* context, int /*num_args*/, sqlite3_value** args) {
  std::string text;
  for (const int64_t tokens : samples_output_tokens(text_arg(args[0])))
    text += str_cat(text.empty() ? "" : ",", tokens);
  sqlite3_result_text64(context, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

// sluice_longest_output(samples_json): the most output tokens of any sample, NULL without samples.
void longest_output_function(sqlite3_context* context, int /*num_args*/, sqlite3_value** args) {
  const std::vector<int64_t> tokens = samples_output_tokens(text_arg(args[0]));
  if (tokens.empty()) return sqlite3_result_null(context);
  sqlite3_result_int64(context, *std::max_element(tokens.begin(), tokens.end()));
}

// Sets up a connection that reads only: it must never take the writer's lock.
void configure_reader(SqliteDb& db) {
  db.exec("PRAGMA query_only = 1");
  db.exec(str_cat("PRAGMA mmap_size = ", kMmapBytes).c_str());
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  using SqlFunction = void (*)(sqlite3_context*, int, sqlite3_value**);
  struct NamedFunction {
    const char* name;
    int num_args;
    SqlFunction function;
  };
  const NamedFunction functions[] = {
      {kContainsFunction, 2, contains_function},
      {kOutputsContainFunction, 2, outputs_contain_function},
      {kSample0Function, 2, sample0_function},
      {kRowValidityFunction, 1, row_validity_function},
      {kSampleTokensFunction, 1, sample_tokens_function},
      {kLongestOutputFunction, 1, longest_output_function},
  };
  for (const auto& [name, num_args, function] : functions) {
    const int code = sqlite3_create_function_v2(db.handle(), name, num_args, flags, nullptr,
                                                function, nullptr, nullptr, nullptr);
    db.check(code, str_cat("cannot register the search function ", name));
  }
}

// ---- SQL for a query

SqlClause search_condition(const std::string& search) {
  const std::string needle = fold_ascii(search);
  SqlClause clause;
  clause.sql = str_cat("(", kContainsFunction, "(rows.prompt, ?) OR ", kContainsFunction,
                       "(rows.error, ?) OR ", kOutputsContainFunction, "(rows.samples, ?))");
  clause.values = {needle, needle, needle};
  return clause;
}

// Returns what follows sluice_row_validity(...) in a condition that holds for rows of validity.
const char* validity_test(RowValidity validity) {
  switch (validity) {
    case RowValidity::Invalid:
      return " = 0";
    case RowValidity::Valid:
      return " = 1";
    case RowValidity::Unknown:
      return " IS NULL";
  }
  return " IS NULL";
}

// Returns " WHERE ..." for query's filters, or an empty clause when it has none.
SqlClause where_clause(const JobTableQuery& query) {
  SqlClause clause;
  if (query.status) {
    clause.sql = " WHERE rows.status = ?";
    clause.values.emplace_back(std::string(to_string(*query.status)));
  }
  if (query.validity) {
    clause.sql += str_cat(clause.sql.empty() ? " WHERE " : " AND ", kRowValidityFunction,
                          "(rows.samples)", validity_test(*query.validity));
  }
  if (!query.search.empty()) {
    SqlClause search = search_condition(query.search);
    clause.sql += str_cat(clause.sql.empty() ? " WHERE " : " AND ", search.sql);
    for (SqlValue& value : search.values) clause.values.push_back(std::move(value));
  }
  return clause;
}

std::string sort_key(JobTableColumn column) {
  switch (column) {
    case JobTableColumn::RowIndex:
      return "rows.row_index";
    case JobTableColumn::Id:
      return "json_extract(rows.input, '$.id')";
    case JobTableColumn::Status:
      return "rows.status";
    case JobTableColumn::Prompt:
      return str_cat("substr(rows.prompt, 1, ", kSortPrefixChars, ")");
    case JobTableColumn::Output:
      return str_cat("substr(", kSample0Function, "(rows.samples, 'output'), 1, ", kSortPrefixChars,
                     ")");
    case JobTableColumn::PromptTokens:
      return "rows.prompt_tokens";
    case JobTableColumn::OutputTokens:
      return str_cat(kSample0Function, "(rows.samples, 'output_tokens')");
    case JobTableColumn::LongestOutputTokens:
      return str_cat(kLongestOutputFunction, "(rows.samples)");
    case JobTableColumn::TotalMs:
      return "rows.total_ms";
    case JobTableColumn::FinishReason:
      return str_cat(kSample0Function, "(rows.samples, 'finish_reason')");
    case JobTableColumn::Valid:
      // RowValidity's order: invalid (0), valid (1), then rows without a verdict.
      return str_cat("coalesce(", kRowValidityFunction, "(rows.samples), 2)");
  }
  return "rows.row_index";
}

std::string order_clause(const JobTableQuery& query) {
  const char* direction = query.is_descending ? " DESC" : "";
  if (query.sort_column == JobTableColumn::RowIndex)
    return str_cat(" ORDER BY rows.row_index", direction);
  return str_cat(" ORDER BY ", sort_key(query.sort_column), direction, ", rows.row_index",
                 direction);
}

void bind_values(SqliteStatement& statement, const std::vector<SqlValue>& values, int first_index) {
  int index = first_index;
  for (const SqlValue& value : values) {
    if (const auto* number = std::get_if<int64_t>(&value)) {
      statement.bind_int(index++, *number);
    } else {
      statement.bind_text(index++, std::get<std::string>(value));
    }
  }
}

// Returns text's first JobTable::kHeadChars characters as valid UTF-8, with "…" when cut.
std::string make_head(std::string_view text) {
  std::string head = sanitize_utf8(text);
  size_t offset = 0;
  size_t num_chars = 0;
  while (offset < head.size() && num_chars < JobTable::kHeadChars) {
    offset += decode_utf8(head, offset).num_bytes;
    ++num_chars;
  }
  if (offset < head.size()) {
    head.resize(offset);
    head += "\u2026";
  }
  return head;
}

RowSummary read_summary(const SqliteStatement& select, const std::string& path) {
  RowSummary summary;
  summary.row_index = select.column_int(0);
  try {
    summary.status = parse_row_status(select.column_text(1));
  } catch (const Error& e) {
    fail(path, ": row ", summary.row_index, ", column status: ", e.what());
  }
  summary.id = select.column_is_null(2) ? std::to_string(summary.row_index) : select.column_text(2);
  summary.prompt_head = make_head(select.column_text(3));
  summary.output_head = make_head(select.column_text(4));
  summary.error_head = make_head(select.column_text(5));
  summary.prompt_tokens = static_cast<int>(select.column_int(6));
  summary.output_tokens = static_cast<int>(select.column_int(7));
  summary.num_samples = static_cast<int>(select.column_int(8));
  // SQLite stores a NaN as NULL, as read_row_result does.
  summary.total_ms =
      select.column_is_null(9) ? std::numeric_limits<double>::quiet_NaN() : select.column_double(9);
  summary.finish_reason = select.column_text(10);
  if (!select.column_is_null(11)) {
    summary.validity = select.column_int(11) == 1 ? RowValidity::Valid : RowValidity::Invalid;
  }
  const std::string sample_tokens = select.column_text(12);
  for (size_t start = 0; start < sample_tokens.size();) {
    size_t end = sample_tokens.find(',', start);
    if (end == std::string::npos) end = sample_tokens.size();
    int tokens = 0;
    std::from_chars(sample_tokens.data() + start, sample_tokens.data() + end, tokens);
    summary.sample_output_tokens.push_back(tokens);
    start = end + 1;
  }
  return summary;
}

// Holds one read transaction so that several statements see the same snapshot of the job. It
// only reads, so ending it with a rollback is the same as a commit and cannot fail.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(SqliteDb& db) : db_(db) { db_.exec("BEGIN"); }
  ~ReadSnapshot() { db_.rollback_quietly(); }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  SqliteDb& db_;
};

// Returns the row indices of query's view, or of the part of it that limit and offset select.
std::vector<int64_t> select_row_indices(SqliteDb& db, const JobTableQuery& query,
                                        std::optional<std::pair<int64_t, int64_t>> limit_offset) {
  const SqlClause where = where_clause(query);
  std::string sql = str_cat("SELECT rows.row_index FROM rows", where.sql, order_clause(query));
  if (limit_offset) sql += " LIMIT ? OFFSET ?";
  SqliteStatement select(db, sql.c_str());
  bind_values(select, where.values, 1);
  if (limit_offset) {
    const int next = static_cast<int>(where.values.size()) + 1;
    select.bind_int(next, limit_offset->first);
    select.bind_int(next + 1, limit_offset->second);
  }
  std::vector<int64_t> indices;
  while (select.step()) indices.push_back(select.column_int(0));
  return indices;
}

}  // namespace

std::unique_ptr<JobTable> JobTable::open(const std::string& path) {
  auto db = open_existing_job_db(path);
  JobInfo info = read_job_meta(*db);
  configure_reader(*db);
  return std::unique_ptr<JobTable>(new JobTable(std::move(db), std::move(info)));
}

JobTable::JobTable(std::unique_ptr<SqliteDb> db, JobInfo info)
    : db_(std::move(db)), info_(std::move(info)) {}

JobTable::~JobTable() = default;

const std::string& JobTable::path() const {
  return db_->path();
}

int64_t JobTable::count(const JobTableQuery& query) const {
  if (!query.has_filters()) {
    // SQLite counts a table's rows from its b-tree pages without decoding a record.
    SqliteStatement select(*db_, "SELECT COUNT(*) FROM rows");
    if (!select.step()) fail(path(), ": no result from a count");
    return select.column_int(0);
  }
  const bool has_same_filters =
      view_ && view_->query.status == query.status && view_->query.validity == query.validity &&
      view_->query.search == query.search && view_->data_version == data_version();
  return static_cast<int64_t>((has_same_filters ? *view_ : view(query)).row_indices.size());
}

std::vector<RowSummary> JobTable::rows(const JobTableQuery& query, int64_t offset,
                                       int64_t limit) const {
  if (offset < 0 || limit < 0) fail(path(), ": a page needs offset >= 0 and limit >= 0");
  if (limit == 0) return {};
  if (!query.has_filters() && query.sort_column == JobTableColumn::RowIndex) {
    // Row order is the primary key's: a page is a short range read, no need to keep the view.
    // Indices and summaries come from one snapshot, so a commit between them cannot shift it.
    const ReadSnapshot snapshot(*db_);
    return summaries(select_row_indices(*db_, query, std::pair{limit, offset}));
  }
  const std::vector<int64_t>& all = view(query).row_indices;
  const auto size = static_cast<int64_t>(all.size());
  if (offset >= size) return {};
  const auto first = all.begin() + offset;
  return summaries(std::vector<int64_t>(first, first + std::min(limit, size - offset)));
}

std::vector<int64_t> JobTable::row_indices(const JobTableQuery& query) const {
  return view(query).row_indices;
}

std::vector<int64_t> JobTable::row_indices_from(int64_t first_row_index) const {
  SqliteStatement select(*db_,
                         "SELECT row_index FROM rows WHERE row_index >= ? ORDER BY row_index");
  select.bind_int(1, first_row_index);
  std::vector<int64_t> indices;
  while (select.step()) indices.push_back(select.column_int(0));
  return indices;
}

const JobTable::View& JobTable::view(const JobTableQuery& query) const {
  // The version is read before the scan: a commit during the scan then makes the next call
  // rescan, never keeps a view older than its version says.
  const int64_t version = data_version();
  if (view_ && view_->query == query && view_->data_version == version) return *view_;
  view_.reset();  // free the old indices before the new ones are read
  view_ = View{query, version, select_row_indices(*db_, query, std::nullopt)};
  return *view_;
}

std::vector<RowSummary> JobTable::summaries(const std::vector<int64_t>& row_indices) const {
  if (row_indices.empty()) return {};
  // The wanted indices travel as one JSON array; CROSS JOIN keeps json_each as the outer loop,
  // so each row is one primary-key lookup and the order is the array's.
  std::string wanted = "[";
  for (size_t i = 0; i < row_indices.size(); ++i)
    wanted += str_cat(i == 0 ? "" : ",", row_indices[i]);
  wanted += "]";
  const std::string sql = str_cat("SELECT ", kSummaryColumns,
                                  " FROM json_each(?) AS wanted CROSS JOIN rows"
                                  " ON rows.row_index = wanted.value ORDER BY wanted.key");
  SqliteStatement select(*db_, sql.c_str());
  // One more character than a head keeps, so make_head can tell a cut text from a full one.
  const auto num_head_chars = static_cast<int64_t>(kHeadChars + 1);
  for (int index = 1; index <= 3; ++index) select.bind_int(index, num_head_chars);
  select.bind_text(4, wanted);
  std::vector<RowSummary> summaries;
  summaries.reserve(row_indices.size());
  while (select.step()) summaries.push_back(read_summary(select, path()));
  return summaries;
}

std::optional<RowResult> JobTable::row(int64_t row_index) const {
  SqliteStatement select(*db_,
                         str_cat("SELECT ", kRowColumns, " FROM rows WHERE row_index = ?").c_str());
  select.bind_int(1, row_index);
  if (!select.step()) return std::nullopt;
  return read_row_result(select, path());
}

JudgeScores JobTable::judge_scores(int num_samples) const {
  JudgeScores scores;
  if (num_samples > 0) {
    // One JSON array a row: [score 0, ..., score n-1, rubric of sample 0] (json_extract with
    // several paths), so each row's samples are parsed once. A score that is not a number (text,
    // null, missing) counts as none, as the dpo export's NaN does.
    std::string paths;
    for (int i = 0; i < num_samples; ++i) paths += str_cat(", '$[", i, "].extra.score'");
    const std::string sql =
        str_cat("SELECT row_index, json_extract(samples", paths,
                ", '$[0].extra.judge.rubric') FROM rows WHERE status = 'done' ORDER BY row_index");
    SqliteStatement select(*db_, sql.c_str());
    while (select.step()) {
      const auto values = nlohmann::json::parse(select.column_text(1), nullptr, false);
      if (!values.is_array() || values.size() != static_cast<size_t>(num_samples) + 1) continue;
      std::vector<std::optional<double>> row(static_cast<size_t>(num_samples));
      bool any = false;
      for (size_t i = 0; i < row.size(); ++i) {
        if (values[i].is_number()) row[i] = values[i].get<double>();
        any = any || row[i].has_value();
      }
      if (!any) continue;
      if (scores.rubric.empty() && values.back().is_string())
        scores.rubric = values.back().get<std::string>();
      scores.by_row.emplace(select.column_int(0), std::move(row));
    }
    return scores;
  }
  // One row per sample; json_each's key is the sample index.
  SqliteStatement select(
      *db_,
      "SELECT rows.row_index, sample.key, json_extract(sample.value, '$.extra.score'), "
      "json_extract(sample.value, '$.extra.judge.rubric') "
      "FROM rows, json_each(rows.samples) AS sample WHERE rows.status = 'done' "
      "AND json_type(sample.value, '$.extra.score') IN ('integer', 'real') "
      "ORDER BY rows.row_index, sample.key");
  while (select.step()) {
    const int64_t row_index = select.column_int(0);
    const auto sample_idx = static_cast<size_t>(select.column_int(1));
    auto& row = scores.by_row[row_index];
    if (row.size() <= sample_idx) row.resize(sample_idx + 1);
    row[sample_idx] = select.column_double(2);
    if (scores.rubric.empty() && !select.column_is_null(3)) scores.rubric = select.column_text(3);
  }
  return scores;
}

int64_t JobTable::data_version() const {
  return db_->query_int("PRAGMA data_version");
}

}  // namespace sluice
