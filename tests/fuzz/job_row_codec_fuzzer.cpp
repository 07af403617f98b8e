// Feeds rows of a job file's `rows` table to the row codec (read_row_result). A job file can be
// damaged or edited, and SQLite lets any column hold any type, so the input spells one value per
// line for the 13 columns in kRowColumns order: "n" NULL, "i<integer>", "r<real>", "t<text>"
// (any other line is text as it is; missing lines are NULL). Checked: an error names the job
// file, and a row that reads back is stored again unchanged (bind_row_result, then reading).
#include <sqlite3.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "engine/core/error.h"
#include "engine/jobs/row_codec.h"
#include "engine/jobs/sqlite_db.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

namespace {

constexpr int kNumColumns = 13;
constexpr const char* kJobPath = "fuzz.sluicejob";  // names the job in errors

// Columns without a declared type keep whatever type a value is stored with.
constexpr const char* kCreateTable =
    "CREATE TABLE rows (row_index, line, status, error, input, messages, prompt, "
    "prompt_tokens, samples, seed, queue_ms, ttft_ms, total_ms)";

void bind_spelled(SqliteDb& db, sqlite3_stmt* statement, int index, std::string_view spelled) {
  if (spelled.empty()) return;
  const std::string rest(spelled.substr(1));
  int code = SQLITE_OK;
  switch (spelled[0]) {
    case 'n':
      return;
    case 'i':
      code = sqlite3_bind_int64(statement, index, std::strtoll(rest.c_str(), nullptr, 10));
      break;
    case 'r':
      code = sqlite3_bind_double(statement, index, std::strtod(rest.c_str(), nullptr));
      break;
    case 't':
      code = sqlite3_bind_text64(statement, index, rest.data(), rest.size(), SQLITE_TRANSIENT,
                                 SQLITE_UTF8);
      break;
    default:
      code = sqlite3_bind_text64(statement, index, spelled.data(), spelled.size(), SQLITE_TRANSIENT,
                                 SQLITE_UTF8);
      break;
  }
  db.check(code, "bind");
}

// Stores one row spelled as above into the emptied table.
void store_spelled_row(SqliteDb& db, std::string_view input) {
  db.exec("DELETE FROM rows");
  sqlite3_stmt* statement = nullptr;
  const std::string sql = str_cat("INSERT INTO rows (", kRowColumns,
                                  ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  db.check(sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &statement, nullptr), "prepare");
  for (int index = 1; index <= kNumColumns && !input.empty(); ++index) {
    const size_t end = input.find('\n');
    bind_spelled(db, statement, index, input.substr(0, end));
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
  }
  const int code = sqlite3_step(statement);
  sqlite3_finalize(statement);
  fuzz::fuzz_require(code == SQLITE_DONE, "the fuzz row could not be stored");
}

void store_row_result(SqliteDb& db, const RowResult& result) {
  db.exec("DELETE FROM rows");
  SqliteStatement insert(db, str_cat("INSERT INTO rows (", kRowColumns,
                                     ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                                 .c_str());
  bind_row_result(insert, result);
  fuzz::fuzz_require(!insert.step(), "INSERT returned a row");
}

RowResult read_stored_row(SqliteDb& db) {
  SqliteStatement select(db, str_cat("SELECT ", kRowColumns, " FROM rows").c_str());
  fuzz::fuzz_require(select.step(), "the stored row is missing");
  return read_row_result(select, kJobPath);
}

// NaN timings (stored as NULL) compare equal to NaN.
bool same_row(RowResult a, RowResult b) {
  for (auto member : {&RowResult::queue_ms, &RowResult::ttft_ms, &RowResult::total_ms}) {
    if (std::isnan(a.*member) && std::isnan(b.*member)) a.*member = b.*member = 0.0;
  }
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<SqliteDb> db = [] {
    auto created = std::make_unique<SqliteDb>(":memory:", SqliteDb::Mode::CreateNew);
    created->exec(kCreateTable);
    return created;
  }();
  store_spelled_row(*db, {reinterpret_cast<const char*>(data), size});
  RowResult result;
  try {
    result = read_stored_row(*db);
  } catch (const Error& error) {
    fuzz::require_names_file(error, kJobPath);
    return 0;
  }
  store_row_result(*db, result);
  fuzz::fuzz_require(same_row(read_stored_row(*db), result),
                     "a row read from the job file changed when stored again");
  return 0;
}
