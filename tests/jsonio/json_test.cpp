// SPDX-License-Identifier: MIT
// Tests of the internal JSON layer (src/jsonio/json.hpp over nlohmann::ordered_json): strict
// parsing, error locations, limits, int64 exactness, typed readers and the writer.
#include "jsonio/json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::jsonio {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

json parse_ok(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_THAT(v, IsOk()) << text;
  return v ? std::move(*v) : json();
}

TEST(JsonParse, ReadsEveryValueType) {
  const json v = parse_ok(R"( {"n": null, "t": true, "f": false, "i": -42, "d": 2.5,
                                   "s": "hi", "a": [1, [2], {}], "o": {"k": []}} )");
  ASSERT_TRUE(v.is_object());
  EXPECT_TRUE(jsonio::member(v, "n").is_null());
  EXPECT_TRUE(jsonio::member(v, "t").get<bool>());
  EXPECT_FALSE(jsonio::member(v, "f").get<bool>());
  EXPECT_EQ(jsonio::member(v, "i").get<std::int64_t>(), -42);
  EXPECT_DOUBLE_EQ(jsonio::member(v, "d").get<double>(), 2.5);
  EXPECT_EQ(jsonio::member(v, "s").get_ref<const std::string&>(), "hi");
  ASSERT_TRUE(jsonio::member(v, "a").is_array());
  EXPECT_EQ(jsonio::as_array(jsonio::member(v, "a")).size(), 3u);
  EXPECT_TRUE(jsonio::as_array(jsonio::member(v, "a"))[2].is_object());
  EXPECT_TRUE(jsonio::member(jsonio::member(v, "o"), "k").is_array());
  EXPECT_FALSE(v.contains("missing"));
  EXPECT_TRUE(v.contains("n"));
}

TEST(JsonParse, KeepsMemberOrder) {
  const json v = parse_ok(R"({"z": 1, "a": 2, "m": 3})");
  const auto& members = jsonio::as_object(v);
  ASSERT_EQ(members.size(), 3u);
  // order: z, a, m as written
  EXPECT_EQ(members[0].first, "z");
  EXPECT_EQ(members[1].first, "a");
  EXPECT_EQ(members[2].first, "m");
}

TEST(JsonParse, ReadsTopLevelScalars) {
  EXPECT_EQ(parse_ok("7").get<std::int64_t>(), 7);
  EXPECT_EQ(parse_ok(" \"x\" ").get_ref<const std::string&>(), "x");
  EXPECT_TRUE(parse_ok("null").is_null());
  EXPECT_TRUE(parse_ok("\t\r\ntrue\n").get<bool>());
}

TEST(JsonParse, DecodesEscapes) {
  const json v = parse_ok(R"("q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20AC")");
  EXPECT_EQ(v.get_ref<const std::string&>(), "q\" b\\ s/ \b\f\n\r\t A\xC3\xA9\xE2\x82\xAC");
}

TEST(JsonParse, DecodesSurrogatePairsToUtf8) {
  // U+1F600 is the pair D83D DE00; U+10FFFF is DBFF DFFF.
  EXPECT_EQ(parse_ok(R"("\uD83D\uDE00")").get_ref<const std::string&>(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(parse_ok(R"("\udbff\udfff")").get_ref<const std::string&>(), "\xF4\x8F\xBF\xBF");
  EXPECT_EQ(parse_ok(R"("\u0000")").get_ref<const std::string&>(), std::string(1, '\0'));
}

TEST(JsonParse, RejectsLoneSurrogates) {
  const char* high = "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF";
  EXPECT_THAT(parse_json(R"("\uD83D")"), ErrorContains(std::string("line 1, column 8: ")));
  EXPECT_THAT(parse_json(R"("\uD83D")"), ErrorContains(high));
  EXPECT_THAT(parse_json(R"("\uD83Dx")"), ErrorContains(high));
  EXPECT_THAT(parse_json(R"("\uD83D\u0041")"), ErrorContains(high));
  EXPECT_THAT(parse_json(R"("\uDE00")"),
              ErrorContains("surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF"));
}

TEST(JsonParse, AcceptsUtf8AndRejectsInvalidUtf8) {
  EXPECT_EQ(parse_ok("\"gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80\"").get_ref<const std::string&>(),
            "gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80");
  for (const char* bad : {"\"\xFF\"", "\"\xC3\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"",
                          "\"\xF4\x90\x80\x80\"", "\"\x80\""}) {
    auto v = parse_json(bad);
    EXPECT_THAT(v, ErrorContains("invalid string: ill-formed UTF-8 byte")) << bad;
    // The message quotes what was read; bytes outside printable ASCII show as \xNN.
    if (!v) {
      EXPECT_TRUE(std::all_of(v.error().message.begin(), v.error().message.end(), [](char c) {
        return c >= 0x20 && c < 0x7F;
      })) << v.error().message;
    }
  }
}

TEST(JsonParse, KeepsInt64Exact) {
  const json max = parse_ok("9223372036854775807");
  ASSERT_TRUE(max.is_number_integer());
  EXPECT_EQ(max.get<std::int64_t>(), std::numeric_limits<std::int64_t>::max());
  const json min = parse_ok("-9223372036854775808");
  ASSERT_TRUE(min.is_number_integer());
  EXPECT_EQ(min.get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  // One past the limits no longer fits: it becomes a double.
  const json above = parse_ok("9223372036854775808");
  EXPECT_TRUE(above.is_number_float());
  EXPECT_DOUBLE_EQ(above.get<double>(), 9223372036854775808.0);
  EXPECT_TRUE(parse_ok("-9223372036854775809").is_number_float());
  EXPECT_TRUE(parse_ok("-0").is_number_integer());
}

TEST(JsonParse, TreatsFractionsAndExponentsAsDoubles) {
  const json thousand = parse_ok("1e3");
  ASSERT_TRUE(thousand.is_number_float());
  EXPECT_DOUBLE_EQ(thousand.get<double>(), 1000.0);
  EXPECT_TRUE(parse_ok("1.0").is_number_float());
  EXPECT_DOUBLE_EQ(parse_ok("-0.125E+2").get<double>(), -12.5);
  EXPECT_DOUBLE_EQ(parse_ok("5e-324").get<double>(), 5e-324);
  EXPECT_TRUE(parse_ok("1").is_number());
  EXPECT_DOUBLE_EQ(parse_ok("3").get<double>(), 3.0);
}

TEST(JsonParse, FlushesUnderflowToZeroAndRejectsOverflow) {
  const json tiny = parse_ok("-1e-400");
  EXPECT_EQ(tiny.get<double>(), 0.0);
  EXPECT_TRUE(std::signbit(tiny.get<double>()));
  EXPECT_EQ(parse_ok("0.000001e-320").get<double>(), 0.0);
  EXPECT_THAT(parse_json("1e400"), HasErrc(errc::out_of_range));
  EXPECT_THAT(parse_json("[1.8e308]"), ErrorContains("line 1, column 2: number 1.8e308"));
  EXPECT_THAT(parse_json("123456789e99999999999999999999"), HasErrc(errc::out_of_range));
}

TEST(JsonParse, RejectsDuplicateKeys) {
  EXPECT_THAT(parse_json(R"({"a": 1, "a": 2})"),
              ErrorContains("line 1, column 10: duplicate key \"a\" in object"));
  // Escapes are decoded before comparing.
  EXPECT_THAT(parse_json(R"({"a": 1, "\u0061": 2})"), ErrorContains("duplicate key"));
  // Large objects switch to a hash set; the check still holds.
  std::string big = "{";
  for (int i = 0; i < 100; ++i) big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  EXPECT_THAT(parse_json(big + "\"k57\": 0}"), ErrorContains("duplicate key \"k57\""));
  EXPECT_THAT(parse_json(big + "\"k100\": 0}"), IsOk());
  // The same key in sibling objects is fine.
  EXPECT_THAT(parse_json(R"([{"a": 1}, {"a": 2}])"), IsOk());
}

TEST(JsonParse, RejectsDepthBombWithoutCrashing) {
  const std::string bomb(100'000, '[');
  auto v = parse_json(bomb);
  EXPECT_THAT(v, HasErrc(errc::out_of_range));
  EXPECT_THAT(v, ErrorContains("line 1, column 257: nesting deeper than the limit of 256"));
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100'000; ++i) s += "{\"a\":";
    return s;
  }();
  EXPECT_THAT(parse_json(objects), HasErrc(errc::out_of_range));
}

TEST(JsonParse, ReportsDuplicateKeysAtTheKeyOnAnyLine) {
  EXPECT_THAT(parse_json("{\"a\": 1,\n  \"b\": {},\n   \"a\": 2}"),
              ErrorContains("line 3, column 4: duplicate key \"a\" in object"));
  // An escaped quote inside the key does not move the reported column off the opening quote.
  EXPECT_THAT(parse_json(R"({"k\"x": 1, "k\"x": 2})"),
              ErrorContains("line 1, column 13: duplicate key \"k\"x\" in object"));
  auto nested = parse_json(R"({"o": {"x": 1, "x": 1}})");
  EXPECT_THAT(nested, HasErrc(errc::invalid_argument));
  EXPECT_THAT(nested, ErrorContains("line 1, column 16: duplicate key \"x\""));
}

TEST(JsonParse, DeepDocumentsUnderARaisedLimitNeitherRecurseNorCrash) {
  // nlohmann's parser keeps its state on the heap and 3.11 destroys values iteratively, so a
  // depth of 100,000 (far beyond what a recursive reader survives) parses and is freed.
  json_parse_limits limits;
  limits.max_depth = 200'000;
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  auto v = parse_json(deep, limits);
  ASSERT_THAT(v, IsOk());
  const json* inner = &*v;
  std::size_t depth = 0;
  while (inner->is_array() && !inner->empty()) {
    inner = &(*inner)[0];
    ++depth;
  }
  EXPECT_EQ(depth, 99'999u);
  limits.max_depth = 99'999;
  EXPECT_THAT(parse_json(deep, limits),
              ErrorContains("line 1, column 100000: nesting deeper than the limit of 99999"));
}

TEST(JsonParse, KeepsMembersInDocumentOrderAndIntegersSigned) {
  const json v = parse_ok(R"({"b": 3, "a": -4, "c": 18446744073709551615})");
  EXPECT_EQ(v.begin().key(), "b");
  EXPECT_TRUE(jsonio::member(v, "b").is_number_integer());
  EXPECT_FALSE(jsonio::member(v, "b").is_number_unsigned());  // held as int64, not uint64
  EXPECT_EQ(jsonio::member(v, "a").get<std::int64_t>(), -4);
  EXPECT_TRUE(jsonio::member(v, "c").is_number_float());
  EXPECT_EQ(to_string(v), R"({"b":3,"a":-4,"c":1.8446744073709552e+19})");
}

TEST(JsonRead, RangeChecksUnsignedValuesBuiltInCode) {
  EXPECT_EQ(*expect_int(json(std::uint32_t{7}), "u", 0, 10), 7);
  EXPECT_THAT(expect_int(json(std::uint64_t{1} << 63), "u"),
              ErrorContains("u: 9223372036854775808 is above the maximum 9223372036854775807"));
  EXPECT_THAT(expect_int(json(std::uint32_t{1}), "u", -5, -1),
              ErrorContains("u: 1 is above the maximum -1"));
  EXPECT_THAT(expect_int(json(2.0), "d"), ErrorContains("d: expected an integer, got a "
                                                        "non-integral number"));
}

TEST(JsonParse, AcceptsNestingUpToTheLimit) {
  const std::string ok_depth = std::string(256, '[') + std::string(256, ']');
  EXPECT_THAT(parse_json(ok_depth), IsOk());
  const std::string too_deep = std::string(257, '[') + std::string(257, ']');
  EXPECT_THAT(parse_json(too_deep), HasErrc(errc::out_of_range));
  json_parse_limits limits;
  limits.max_depth = 2;
  EXPECT_THAT(parse_json("[[1]]", limits), IsOk());
  EXPECT_THAT(parse_json("[[[1]]]", limits), HasErrc(errc::out_of_range));
  EXPECT_THAT(parse_json("1", json_parse_limits{0, 10}), IsOk());
}

TEST(JsonParse, RejectsInputAboveTheSizeLimit) {
  json_parse_limits limits;
  limits.max_size = 8;
  EXPECT_THAT(parse_json("[1,2,3,4]", limits), HasErrc(errc::out_of_range));
  EXPECT_THAT(parse_json("[1,2,34]", limits), IsOk());
}

struct malformed_case {
  const char* text;
  const char* message;  // the expected "line L, column C: what" prefix or substring
};

TEST(JsonParse, ReportsLineAndColumnForEveryMalformedInput) {
  const std::vector<malformed_case> cases = {
      {"", "line 1, column 1: empty input; expected a JSON value"},
      {"  \n  ", "line 2, column 3: empty input; expected a JSON value"},
      {"[1,]",
       "line 1, column 4: syntax error while parsing value - unexpected ']'; expected '[', '{', or "
       "a literal"},
      {"{\"a\": 1,}",
       "line 1, column 9: syntax error while parsing object key - unexpected '}'; expected string "
       "literal"},
      {"[1 2]",
       "line 1, column 4: syntax error while parsing array - unexpected number literal; expected "
       "']'"},
      {"{\n  \"a\": 1\n  \"b\": 2\n}",
       "line 3, column 5: syntax error while parsing object - unexpected string literal; expected "
       "'}'"},
      {"{\"a\" 1}",
       "line 1, column 6: syntax error while parsing object separator - unexpected number literal; "
       "expected ':'"},
      {"{a: 1}",
       "line 1, column 2: syntax error while parsing object key - invalid literal; last read: "
       "'{a'; expected string literal"},
      {"{1: 1}",
       "line 1, column 2: syntax error while parsing object key - unexpected number literal; "
       "expected string literal"},
      {"01",
       "line 1, column 2: syntax error while parsing value - unexpected number literal; expected "
       "end of input"},
      {"-01",
       "line 1, column 3: syntax error while parsing value - unexpected number literal; expected "
       "end of input"},
      {"1.",
       "line 1, column 3: syntax error while parsing value - invalid number; expected digit after "
       "'.'; last read: '1.'"},
      {".5",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: '.'"},
      {"-",
       "line 1, column 2: syntax error while parsing value - invalid number; expected digit after "
       "'-'; last read: '-'"},
      {"-x",
       "line 1, column 2: syntax error while parsing value - invalid number; expected digit after "
       "'-'; last read: '-x'"},
      {"1e",
       "line 1, column 3: syntax error while parsing value - invalid number; expected '+', '-', or "
       "digit after exponent; last read: '1e'"},
      {"1e+",
       "line 1, column 4: syntax error while parsing value - invalid number; expected digit after "
       "exponent sign; last read: '1e+'"},
      {"+1",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: '+'"},
      {"NaN",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: 'N'"},
      {"[-Infinity]",
       "line 1, column 3: syntax error while parsing value - invalid number; expected digit after "
       "'-'; last read: '-I'"},
      {"Infinity",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: 'I'"},
      {"tru",
       "line 1, column 4: syntax error while parsing value - invalid literal; last read: 'tru'"},
      {"nul",
       "line 1, column 4: syntax error while parsing value - invalid literal; last read: 'nul'"},
      {"True",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: 'T'"},
      {"\"abc",
       "line 1, column 5: syntax error while parsing value - invalid string: missing closing "
       "quote; last read: '\"abc'"},
      {"[\"a\\",
       "line 1, column 5: syntax error while parsing value - invalid string: forbidden character "
       "after backslash; last read: '\"a\\'"},
      {"\"\\x\"",
       "line 1, column 3: syntax error while parsing value - invalid string: forbidden character "
       "after backslash; last read: '\"\\x'"},
      {"\"\\u12\"",
       "line 1, column 6: syntax error while parsing value - invalid string: '\\u' must be "
       "followed by 4 hex digits; last read: '\"\\u12\"'"},
      {"\"\\u12",
       "line 1, column 6: syntax error while parsing value - invalid string: '\\u' must be "
       "followed by 4 hex digits; last read: '\"\\u12'"},
      {"\"a\tb\"",
       "line 1, column 3: syntax error while parsing value - invalid string: control character "
       "U+0009 (HT) must be escaped to \\u0009 or \\t; last read: '\"a<U+0009>'"},
      {"\"a\nb\"",
       "line 1, column 3: syntax error while parsing value - invalid string: control character "
       "U+000A (LF) must be escaped to \\u000A or \\n; last read: '\"a<U+000A>'"},
      {"[1] x",
       "line 1, column 5: syntax error while parsing value - invalid literal; last read: '1] x'; "
       "expected end of input"},
      {"{} {}",
       "line 1, column 4: syntax error while parsing value - unexpected '{'; expected end of "
       "input"},
      {"// c\n1",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: '/'"},
      {"/* c */ 1",
       "line 1, column 1: syntax error while parsing value - invalid literal; last read: '/'"},
      {"[1, // c\n2]",
       "line 1, column 5: syntax error while parsing value - invalid literal; last read: '1, /'"},
      {"[",
       "line 1, column 2: syntax error while parsing value - unexpected end of input; expected "
       "'[', '{', or a literal"},
      {"[1",
       "line 1, column 3: syntax error while parsing array - unexpected end of input; expected "
       "']'"},
      {"{",
       "line 1, column 2: syntax error while parsing object key - unexpected end of input; "
       "expected string literal"},
      {"{\"a\":",
       "line 1, column 6: syntax error while parsing value - unexpected end of input; expected "
       "'[', '{', or a literal"},
      {"{\"a\":1",
       "line 1, column 7: syntax error while parsing object - unexpected end of input; expected "
       "'}'"},
      {"[1}", "line 1, column 3: syntax error while parsing array - unexpected '}'; expected ']'"},
      {"{\"a\":1]",
       "line 1, column 7: syntax error while parsing object - unexpected ']'; expected '}'"},
      {"\xEF\xBB\xBF{}", "line 1, column 1: a byte order mark is not allowed"},
      {"[\x01]",
       "line 1, column 2: syntax error while parsing value - invalid literal; last read: "
       "'[<U+0001>'"},
      {"\"\\",
       "line 1, column 3: syntax error while parsing value - invalid string: forbidden character "
       "after backslash; last read: '\"\\'"},
      {"[\"\\uZZZZ\"]",
       "line 1, column 5: syntax error while parsing value - invalid string: '\\u' must be "
       "followed by 4 hex digits; last read: '\"\\uZ'"},
      {"[1,\n\n   ]",
       "line 3, column 4: syntax error while parsing value - unexpected ']'; expected '[', '{', or "
       "a literal"},
  };
  for (const auto& c : cases) {
    auto v = parse_json(c.text);
    EXPECT_THAT(v, HasErrc(errc::invalid_argument)) << c.text;
    EXPECT_THAT(v, ErrorContains(c.message)) << c.text;
    if (!v) {
      EXPECT_THAT(v.error().message, MatchesRegex("line [0-9]+, column [0-9]+: .*")) << c.text;
    }
  }
}

TEST(JsonWrite, WritesCompactDeterministicText) {
  json v = json::object();
  jsonio::add_member(v, "b", true);
  jsonio::add_member(v, "n", nullptr);
  jsonio::add_member(v, "i", -7);
  jsonio::add_member(v, "d", 0.1);
  jsonio::add_member(v, "s", "x\"y");
  json a = json::array();
  a.push_back(1);
  a.push_back(json::object());
  jsonio::add_member(v, "a", std::move(a));
  // members in insertion order, no whitespace
  EXPECT_EQ(to_string(v), R"({"b":true,"n":null,"i":-7,"d":0.1,"s":"x\"y","a":[1,{}]})");
  EXPECT_EQ(to_string(v), to_string(v));
}

TEST(JsonWrite, EscapesControlCharactersAndReplacesInvalidUtf8) {
  // \n and friends use their short escapes; other controls use \u00XX.
  EXPECT_EQ(to_string(json(std::string("a\nb\x01\x1f\\/\t"))), R"("a\nb\u0001\u001f\\/\t")");
  EXPECT_EQ(to_string(json(std::string(1, '\0'))), R"("\u0000")");
  EXPECT_EQ(to_string(json("\xC3\xA9")), "\"\xC3\xA9\"");
  EXPECT_EQ(to_string(json("a\xFF")), "\"a\xEF\xBF\xBD\"");
}

TEST(JsonWrite, KeepsIntegersExactAndDoublesDistinct) {
  EXPECT_EQ(to_string(json(std::numeric_limits<std::int64_t>::max())), "9223372036854775807");
  EXPECT_EQ(to_string(json(std::numeric_limits<std::int64_t>::min())), "-9223372036854775808");
  // A value built from a uint64 stays an integer (nlohmann's number_unsigned) ...
  EXPECT_EQ(to_string(json(std::uint64_t{18446744073709551615u})), "18446744073709551615");
  // ... while the reader turns integers beyond int64 into doubles.
  EXPECT_EQ(to_string(parse_ok("18446744073709551615")), "1.8446744073709552e+19");
  // doubles: shortest round trip, always marked as doubles
  EXPECT_EQ(to_string(json(1000.0)), "1000.0");
  EXPECT_EQ(to_string(json(-0.0)), "-0.0");
  EXPECT_EQ(to_string(json(0.1)), "0.1");
  EXPECT_EQ(to_string(json(1e300)), "1e+300");
  EXPECT_EQ(to_string(json(std::numeric_limits<double>::quiet_NaN())), "null");
  EXPECT_EQ(to_string(json(-std::numeric_limits<double>::infinity())), "null");
}

TEST(JsonWrite, PrettyPrintsWithRowsOnOneLine) {
  const json v = parse_ok(R"({"m": [[1, 2], [3, 4]], "o": {"k": "v"}, "e": [], "f": {}})");
  EXPECT_EQ(to_string(v, true),
            "{\n"
            "  \"m\": [\n"
            "    [1, 2],\n"
            "    [3, 4]\n"
            "  ],\n"
            "  \"o\": {\"k\": \"v\"},\n"
            "  \"e\": [],\n"
            "  \"f\": {}\n"
            "}");
}

TEST(JsonWrite, RoundTripsThroughParse) {
  const char* text = R"({"a": [1, -2, 3.5, 1e-7, 1e3, 9223372036854775807, -0.0, 0],
      "s": "\u00e9\ud83d\ude00\n\u0001\"\\", "o": {"x": null, "y": [true, false, {}, []]},
      "deep": [[[[{"z": [0.30000000000000004]}]]]]})";
  const json first = parse_ok(text);
  for (const bool pretty : {false, true}) {
    const std::string written = to_string(first, pretty);
    const json second = parse_ok(written);
    EXPECT_EQ(second, first) << written;
    EXPECT_EQ(to_string(second, pretty), written);
  }
  EXPECT_TRUE(jsonio::as_array(jsonio::member(first, "a"))[4].is_number_float());
}

TEST(JsonValue, ComparesStructurally) {
  EXPECT_EQ(parse_ok("[1, {\"a\": null}]"), parse_ok("[ 1 , { \"a\" : null } ]"));
  // nlohmann compares numbers by value; the reader still keeps the two types apart.
  EXPECT_EQ(parse_ok("1"), parse_ok("1.0"));
  EXPECT_TRUE(parse_ok("1").is_number_integer());
  EXPECT_TRUE(parse_ok("1.0").is_number_float());
  EXPECT_NE(parse_ok(R"({"a":1,"b":2})"), parse_ok(R"({"b":2,"a":1})"));
  EXPECT_EQ(json(std::uint32_t{5}), json(std::int64_t{5}));
}

TEST(JsonRead, NamesThePathInErrors) {
  const json doc = parse_ok(R"({"n": 5, "d": 1.5, "s": "x", "b": true, "a": [1], "neg": -3})");
  EXPECT_EQ(*get_int(doc, "n", "cfg"), 5);
  EXPECT_EQ(*get_string(doc, "s", "cfg"), "x");
  EXPECT_TRUE(*get_bool(doc, "b", ""));
  EXPECT_DOUBLE_EQ(*get_number(doc, "n", ""), 5.0);
  EXPECT_EQ(get_array(doc, "a", "")->size(), 1u);
  EXPECT_THAT(get_int(doc, "missing", "cfg"), ErrorContains("cfg.missing: missing required"));
  EXPECT_THAT(get_int(doc, "d", "cfg"),
              ErrorContains("cfg.d: expected an integer, got a non-integral number"));
  EXPECT_THAT(get_string(doc, "n", "x[2]"),
              ErrorContains("x[2].n: expected a string, got an integer"));
  EXPECT_THAT(get_int(doc, "neg", "", 0, 10), HasErrc(errc::out_of_range));
  EXPECT_THAT(get_int(doc, "neg", "", 0, 10), ErrorContains("neg: -3 is below the minimum 0"));
  EXPECT_THAT(get_int(doc, "n", "", 0, 4), ErrorContains("n: 5 is above the maximum 4"));
  EXPECT_THAT(get_int(parse_ok("[]"), "n", ""), ErrorContains("(root): expected an object"));
  EXPECT_EQ(json_path("", "a"), "a");
  EXPECT_EQ(json_path(json_path("v", 3), "kind"), "v[3].kind");
}

TEST(JsonValue, MemberLookupsOfMissingPathsAreNullNotDangling) {
  // issue 17: callers of the old find() dereferenced its nullptr (hetsched-conform crashed on a
  // step without "expect"); member() returns a null value that can be looked into further
  // (nlohmann's const operator[] would assert on a missing key).
  const json v = parse_ok(R"({"step": {"op": "set_bad_node"}, "list": [1], "n": null})");
  EXPECT_TRUE(jsonio::member(jsonio::member(v, "step"), "expect").is_null());
  EXPECT_TRUE(jsonio::member(jsonio::member(jsonio::member(jsonio::member(v, "step"), "expect"),
                                            "group_after"),
                             "exists")
                  .is_null());
  EXPECT_TRUE(jsonio::member(jsonio::member(v, "list"), "x").is_null());  // not an object
  EXPECT_TRUE(jsonio::member(jsonio::member(jsonio::member(v, "step"), "op"), "deeper")
                  .is_null());  // a string
  EXPECT_TRUE(jsonio::member(json(3), "x").is_null());
  EXPECT_EQ(&jsonio::member(v, "absent"),
            &jsonio::member(jsonio::member(v, "step"), "absent"));  // the one shared null
  // An explicit null and an absent member read alike; contains() tells them apart.
  EXPECT_TRUE(jsonio::member(v, "n").is_null());
  EXPECT_TRUE(v.contains("n"));
  EXPECT_FALSE(v.contains("absent"));
  EXPECT_FALSE(jsonio::member(v, "list").contains("x"));
  EXPECT_EQ(jsonio::member(jsonio::member(v, "step"), "op").get_ref<const std::string&>(),
            "set_bad_node");
}

TEST(JsonObjectReader, ReadsOptionalContainers) {
  const json doc =
      parse_ok(R"({"a": [1, 2], "m": {"k": true}, "o": {"x": 1}, "bad": 3, "badm": []})");
  auto r = json_object_reader::make(doc, "root");
  ASSERT_THAT(r, IsOk());
  auto a = r->get_optional_array("a");
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->size(), 2u);
  auto none = r->get_optional_array("absent");
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->empty());
  EXPECT_THAT(r->get_optional_array("bad"), ErrorContains("root.bad: expected an array, got an "
                                                          "integer"));
  auto m = r->get_optional_members("m");
  ASSERT_THAT(m, IsOk());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].first, "k");
  EXPECT_TRUE(r->get_optional_members("absent")->empty());
  EXPECT_THAT(r->get_optional_members("badm"), ErrorContains("root.badm: expected an object"));
  auto o = r->get_optional_object("o");
  ASSERT_THAT(o, IsOk());
  ASSERT_TRUE(o->has_value());
  EXPECT_EQ(*(*o)->get_int("x"), 1);
  EXPECT_THAT((*o)->finish(), IsOk());
  auto absent = r->get_optional_object("absent");
  ASSERT_THAT(absent, IsOk());
  EXPECT_FALSE(absent->has_value());
  EXPECT_THAT(r->finish(), IsOk());
}

TEST(JsonObjectReader, RejectsUnknownMembers) {
  const json doc = parse_ok(R"({"x": {"known": 1, "opt": "s", "extra": 2}})");
  auto root = json_object_reader::make(doc, "");
  ASSERT_THAT(root, IsOk());
  auto x = root->get_object("x");
  ASSERT_THAT(x, IsOk());
  EXPECT_EQ(*x->get_int("known"), 1);
  EXPECT_EQ(*x->get_string("opt", "fallback"), "s");
  EXPECT_EQ(*x->get_string("absent", "fallback"), "fallback");
  EXPECT_EQ(*x->get_int_or("absent", 9, 0, 10), 9);
  EXPECT_THAT(x->finish(), ErrorContains("x.extra: unknown member"));
  EXPECT_THAT(x->get_string("extra"), ErrorContains("x.extra: expected a string, got an integer"));
  EXPECT_THAT(x->finish(), IsOk());
  EXPECT_THAT(root->finish(), IsOk());
  EXPECT_THAT(json_object_reader::make(parse_ok("3"), "p"), ErrorContains("p: expected an object"));
}

TEST(JsonParse, ParsesTheFgdVector) {
  // Its cost is BM_JsonParseFgdVector in bench/micro/config_io_bench.cpp.
  const std::string text =
      hetsched::testing::read_shared("vectors/fgd/openb_default_seed42_fgd.json");
  auto v = parse_json(text);
  ASSERT_THAT(v, IsOk());
  EXPECT_TRUE(jsonio::member((*v), "nodes").is_array());
  EXPECT_EQ(jsonio::as_array(jsonio::member((*v), "nodes")).size(), 1213u);
  EXPECT_EQ(parse_ok(to_string(*v)), *v);
}

}  // namespace
}  // namespace hetsched::jsonio
