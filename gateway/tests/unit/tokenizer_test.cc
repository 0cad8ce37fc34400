#include "protocol/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shmemcached {
namespace {

std::vector<std::string> Tokens(std::string line, const char** rest = nullptr) {
  Token t[kMaxTokens];
  size_t n = TokenizeCommand(line.data(), t, kMaxTokens);
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < n; ++i) out.emplace_back(t[i].value, t[i].length);
  EXPECT_EQ(t[n - 1].length, 0u);
  static std::string rest_copy;
  rest_copy = t[n - 1].value == nullptr ? "<null>" : t[n - 1].value;
  if (rest != nullptr) *rest = rest_copy.c_str();
  return out;
}

TEST(Tokenizer, SpacesOnlySeparate) {
  EXPECT_EQ(Tokens("get a b"), (std::vector<std::string>{"get", "a", "b"}));
  EXPECT_EQ(Tokens("  get   a  "), (std::vector<std::string>{"get", "a"}));
  EXPECT_EQ(Tokens("get a\tb"), (std::vector<std::string>{"get", "a\tb"}));  // a tab is part of the key
  EXPECT_TRUE(Tokens("").empty());
  EXPECT_TRUE(Tokens("    ").empty());
}

TEST(Tokenizer, StopsAtNul) {
  std::string line("get a\0b", 7);
  EXPECT_EQ(Tokens(line), (std::vector<std::string>{"get", "a"}));
}

TEST(Tokenizer, MoreThan23TokensLeavesTheRest) {
  std::string line = "get";
  for (int i = 0; i < 30; ++i) line += " k" + std::to_string(i);
  const char* rest;
  auto t = Tokens(line, &rest);
  ASSERT_EQ(t.size(), 23u);
  EXPECT_EQ(t[22], "k21");
  EXPECT_EQ(std::string(rest), "k22 k23 k24 k25 k26 k27 k28 k29");
}

TEST(Tokenizer, Exactly23TokensWithTrailingSpace) {
  std::string line = "get";
  for (int i = 0; i < 22; ++i) line += " k" + std::to_string(i);
  const char* rest;
  EXPECT_EQ(Tokens(line + " ", &rest).size(), 23u);
  EXPECT_STREQ(rest, "<null>");
  EXPECT_EQ(Tokens(line + "  ", &rest).size(), 23u);
  EXPECT_STREQ(rest, " ");  // a rest of spaces: tokenizing it again yields no key
}

}  // namespace
}  // namespace shmemcached
