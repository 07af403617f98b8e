#include "engine/core/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

// The published test vectors of FIPS 180-2 (appendix B) and the empty message.
TEST(Sha256, Fips180TestVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Lengths around the padding boundaries (55/56 bytes fit or spill the length into a second
// block). Expected digests computed with `python3 -c "..." | sha256sum` (GNU coreutils) when
// this test was written.
TEST(Sha256, PaddingBoundariesMatchSha256sum) {
  const std::pair<size_t, const char*> cases[] = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
      {128, "24da1b81d0b16df6428eee73c69fcb2a93c76bc6df706f0c6670fe6bfe800464"},
  };
  for (const auto& [length, digest] : cases)
    EXPECT_EQ(sha256_hex(std::string(length, 'x')), digest) << length << " bytes";
}

TEST(Sha256, UpdatesInPiecesEqualOneUpdate) {
  const std::string message(1000, 'q');
  const std::string whole = sha256_hex(message);
  for (size_t piece : {1u, 3u, 63u, 64u, 65u, 200u}) {
    Sha256 hash;
    for (size_t offset = 0; offset < message.size(); offset += piece)
      hash.update(message.data() + offset, std::min(piece, message.size() - offset));
    EXPECT_EQ(hash.finish_hex(), whole) << "pieces of " << piece;
  }
}

TEST(Sha256, FinishResetsForTheNextMessage) {
  Sha256 hash;
  hash.update("junk", 4);
  (void)hash.finish_hex();
  hash.update("abc", 3);
  EXPECT_EQ(hash.finish_hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A file larger than the 1 MiB read chunk. Expected digest computed by piping the same bytes,
// python3 -c "sys.stdout.buffer.write(bytes(((i*31+7)&0xff) for i in range(3*1048576+17)))",
// through sha256sum when this test was written.
TEST(Sha256, FileInChunksMatchesSha256sum) {
  std::string content(3 * 1048576 + 17, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>((i * 31 + 7) & 0xff);
  const std::string path = test::make_temp_dir("sha256") + "/data.bin";
  test::write_file(path, content);
  EXPECT_EQ(sha256_file_hex(path),
            "27f3f0120d4a72b66e7b58152c631644bd689231ebd4487469b59226f1be13af");
}

TEST(Sha256, MissingFileNamesIt) {
  const std::string path = test::make_temp_dir("sha256") + "/missing.jsonl";
  try {
    sha256_file_hex(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Sha256, DirectoryNamesIt) {
  const std::string dir = test::make_temp_dir("sha256");
  try {
    sha256_file_hex(dir);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice
