// Feeds the JSON files of a Hugging Face model directory that set up a model: config.json (the
// model configuration, then validated), tokenizer_config.json (tokenizer settings and the chat
// template) and generation_config.json (extra end-of-sequence ids). Each reader gets the same
// bytes, so one corpus covers the keys of all three.
#include <cstddef>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/model/hf_config.h"
#include "engine/tokenizer/hf_tokenizer_config.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"

using namespace sluice;

namespace {

// Runs one reader; its errors must name the file.
template <typename Read>
void read_named(const std::string& path, Read read) {
  try {
    read(path);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_named(fuzz::write_input_file("config.json", data, size),
             [](const std::string& path) { read_hf_config(path).validate(path); });
  read_named(fuzz::write_input_file("tokenizer_config.json", data, size),
             [](const std::string& path) {
               (void)read_hf_tokenizer_config(path);
               (void)read_hf_chat_template(path);
             });
  read_named(fuzz::write_input_file("generation_config.json", data, size),
             [](const std::string& path) { (void)read_hf_generation_eos_ids(path); });
  return 0;
}
