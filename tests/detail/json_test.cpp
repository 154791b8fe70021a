// SPDX-License-Identifier: MIT
// Tests of hetsched::detail JSON: values, strict parsing, error locations, limits and writing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <hetsched/detail/json.hpp>

#include "support/matchers.hpp"
#include "support/shared_data.hpp"

namespace hetsched::detail {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

json_value parse_ok(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_THAT(v, IsOk()) << text;
  return v ? std::move(*v) : json_value();
}

TEST(JsonParse, ReadsEveryValueType) {
  const json_value v = parse_ok(R"( {"n": null, "t": true, "f": false, "i": -42, "d": 2.5,
                                   "s": "hi", "a": [1, [2], {}], "o": {"k": []}} )");
  ASSERT_TRUE(v.is_object());
  EXPECT_TRUE(v["n"].is_null());
  EXPECT_TRUE(v["t"].as_bool());
  EXPECT_FALSE(v["f"].as_bool());
  EXPECT_EQ(v["i"].as_int64(), -42);
  EXPECT_DOUBLE_EQ(v["d"].as_double(), 2.5);
  EXPECT_EQ(v["s"].as_string(), "hi");
  ASSERT_TRUE(v["a"].is_array());
  EXPECT_EQ(v["a"].as_array().size(), 3u);
  EXPECT_TRUE(v["a"].as_array()[2].is_object());
  EXPECT_TRUE(v["o"]["k"].is_array());
  EXPECT_FALSE(v.contains("missing"));
  EXPECT_TRUE(v.contains("n"));
}

TEST(JsonParse, KeepsMemberOrder) {
  const json_value v = parse_ok(R"({"z": 1, "a": 2, "m": 3})");
  const auto& members = v.as_object();
  ASSERT_EQ(members.size(), 3u);
  // order: z, a, m as written
  EXPECT_EQ(members[0].first, "z");
  EXPECT_EQ(members[1].first, "a");
  EXPECT_EQ(members[2].first, "m");
}

TEST(JsonParse, ReadsTopLevelScalars) {
  EXPECT_EQ(parse_ok("7").as_int64(), 7);
  EXPECT_EQ(parse_ok(" \"x\" ").as_string(), "x");
  EXPECT_TRUE(parse_ok("null").is_null());
  EXPECT_TRUE(parse_ok("\t\r\ntrue\n").as_bool());
}

TEST(JsonParse, DecodesEscapes) {
  const json_value v = parse_ok(R"("q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20AC")");
  EXPECT_EQ(v.as_string(), "q\" b\\ s/ \b\f\n\r\t A\xC3\xA9\xE2\x82\xAC");
}

TEST(JsonParse, DecodesSurrogatePairsToUtf8) {
  // U+1F600 is the pair D83D DE00; U+10FFFF is DBFF DFFF.
  EXPECT_EQ(parse_ok(R"("\uD83D\uDE00")").as_string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(parse_ok(R"("\udbff\udfff")").as_string(), "\xF4\x8F\xBF\xBF");
  EXPECT_EQ(parse_ok(R"("\u0000")").as_string(), std::string(1, '\0'));
}

TEST(JsonParse, RejectsLoneSurrogates) {
  EXPECT_THAT(parse_json(R"("\uD83D")"), ErrorContains("high surrogate"));
  EXPECT_THAT(parse_json(R"("\uD83Dx")"), ErrorContains("high surrogate"));
  EXPECT_THAT(parse_json(R"("\uD83D\u0041")"), ErrorContains("high surrogate"));
  EXPECT_THAT(parse_json(R"("\uDE00")"), ErrorContains("lone low surrogate"));
}

TEST(JsonParse, AcceptsUtf8AndRejectsInvalidUtf8) {
  EXPECT_EQ(parse_ok("\"gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80\"").as_string(),
            "gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80");
  for (const char* bad : {"\"\xFF\"", "\"\xC3\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"",
                          "\"\xF4\x90\x80\x80\"", "\"\x80\""}) {
    EXPECT_THAT(parse_json(bad), ErrorContains("invalid UTF-8")) << bad;
  }
}

TEST(JsonParse, KeepsInt64Exact) {
  const json_value max = parse_ok("9223372036854775807");
  ASSERT_TRUE(max.is_integer());
  EXPECT_EQ(max.as_int64(), std::numeric_limits<std::int64_t>::max());
  const json_value min = parse_ok("-9223372036854775808");
  ASSERT_TRUE(min.is_integer());
  EXPECT_EQ(min.as_int64(), std::numeric_limits<std::int64_t>::min());
  // One past the limits no longer fits: it becomes a double.
  const json_value above = parse_ok("9223372036854775808");
  EXPECT_TRUE(above.is_double());
  EXPECT_DOUBLE_EQ(above.as_double(), 9223372036854775808.0);
  EXPECT_TRUE(parse_ok("-9223372036854775809").is_double());
  EXPECT_TRUE(parse_ok("-0").is_integer());
}

TEST(JsonParse, TreatsFractionsAndExponentsAsDoubles) {
  const json_value thousand = parse_ok("1e3");
  ASSERT_TRUE(thousand.is_double());
  EXPECT_DOUBLE_EQ(thousand.as_double(), 1000.0);
  EXPECT_TRUE(parse_ok("1.0").is_double());
  EXPECT_DOUBLE_EQ(parse_ok("-0.125E+2").as_double(), -12.5);
  EXPECT_DOUBLE_EQ(parse_ok("5e-324").as_double(), 5e-324);
  EXPECT_TRUE(parse_ok("1").is_number());
  EXPECT_DOUBLE_EQ(parse_ok("3").as_double(), 3.0);
}

TEST(JsonParse, FlushesUnderflowToZeroAndRejectsOverflow) {
  const json_value tiny = parse_ok("-1e-400");
  EXPECT_EQ(tiny.as_double(), 0.0);
  EXPECT_TRUE(std::signbit(tiny.as_double()));
  EXPECT_EQ(parse_ok("0.000001e-320").as_double(), 0.0);
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
      {"", "line 1, column 1: empty input"},
      {"  \n  ", "line 2, column 3: empty input"},
      {"[1,]", "line 1, column 4: unexpected ']'; expected a value"},
      {"{\"a\": 1,}", "line 1, column 9: expected a string key after ','; trailing commas"},
      {"[1 2]", "line 1, column 4: expected ',' or ']' in array"},
      {"{\n  \"a\": 1\n  \"b\": 2\n}", "line 3, column 3: expected ',' or '}' in object"},
      {"{\"a\" 1}", "line 1, column 6: expected ':' after object key"},
      {"{a: 1}", "line 1, column 2: expected a string key in object, got 'a'"},
      {"{1: 1}", "line 1, column 2: expected a string key"},
      {"01", "line 1, column 1: invalid number: leading zeros"},
      {"-01", "line 1, column 1: invalid number: leading zeros"},
      {"1.", "line 1, column 3: invalid number: expected a digit after '.'"},
      {".5", "line 1, column 1: unexpected '.'; expected a value"},
      {"-", "line 1, column 2: invalid number: expected a digit after '-'"},
      {"-x", "line 1, column 2: invalid number"},
      {"1e", "line 1, column 3: invalid number: expected a digit in the exponent"},
      {"1e+", "line 1, column 4: invalid number: expected a digit in the exponent"},
      {"+1", "line 1, column 1: unexpected '+'"},
      {"NaN", "line 1, column 1: unexpected 'N'"},
      {"[-Infinity]", "line 1, column 3: invalid number"},
      {"Infinity", "line 1, column 1: unexpected 'I'"},
      {"tru", "line 1, column 1: unexpected 't'"},
      {"nul", "line 1, column 1: unexpected 'n'"},
      {"True", "line 1, column 1: unexpected 'T'"},
      {"\"abc", "line 1, column 1: unterminated string"},
      {"[\"a\\", "line 1, column 2: unterminated string"},
      {"\"\\x\"", "line 1, column 2: invalid escape: 'x'"},
      {"\"\\u12\"", "line 1, column 6: \\u escape needs 4 hex digits, got '\"'"},
      {"\"\\u12", "line 1, column 6: \\u escape needs 4 hex digits, got end of input"},
      {"\"a\tb\"", "line 1, column 3: control character U+0009 in string must be escaped"},
      {"\"a\nb\"", "line 1, column 3: control character U+000A"},
      {"[1] x", "line 1, column 5: unexpected characters after the JSON value"},
      {"{} {}", "line 1, column 4: unexpected characters after"},
      {"// c\n1", "line 1, column 1: unexpected '/'"},
      {"/* c */ 1", "line 1, column 1: unexpected '/'"},
      {"[1, // c\n2]", "line 1, column 5: unexpected '/'"},
      {"[", "line 1, column 2: unexpected end of input; expected a value"},
      {"[1", "line 1, column 3: unexpected end of input; expected ',' or ']' in array"},
      {"{", "line 1, column 2: unexpected end of input; expected a string key"},
      {"{\"a\":", "line 1, column 6: unexpected end of input; expected a value"},
      {"{\"a\":1", "line 1, column 7: unexpected end of input; expected ',' or '}' in object"},
      {"[1}", "line 1, column 3: expected ',' or ']' in array"},
      {"{\"a\":1]", "line 1, column 7: expected ',' or '}' in object"},
      {"\xEF\xBB\xBF{}", "line 1, column 1: unexpected byte 0xEF"},
      {"[\x01]", "line 1, column 2: unexpected byte 0x01"},
      {"\"\\", "line 1, column 1: unterminated string"},
      {"[\"\\uZZZZ\"]", "line 1, column 5: \\u escape needs 4 hex digits, got 'Z'"},
      {"[1,\n\n   ]", "line 3, column 4: unexpected ']'"},
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
  json_value v = json_value::object();
  v.insert("b", true);
  v.insert("n", nullptr);
  v.insert("i", -7);
  v.insert("d", 0.1);
  v.insert("s", "x\"y");
  json_value a = json_value::array();
  a.push_back(1);
  a.push_back(json_value::object());
  v.insert("a", std::move(a));
  // members in insertion order, no whitespace
  EXPECT_EQ(to_string(v), R"({"b":true,"n":null,"i":-7,"d":0.1,"s":"x\"y","a":[1,{}]})");
  EXPECT_EQ(to_string(v), to_string(v));
}

TEST(JsonWrite, EscapesControlCharactersAndReplacesInvalidUtf8) {
  // \n and friends use their short escapes; other controls use \u00XX.
  EXPECT_EQ(to_string(json_value(std::string("a\nb\x01\x1f\\/\t"))), R"("a\nb\u0001\u001f\\/\t")");
  EXPECT_EQ(to_string(json_value(std::string(1, '\0'))), R"("\u0000")");
  EXPECT_EQ(to_string(json_value("\xC3\xA9")), "\"\xC3\xA9\"");
  EXPECT_EQ(to_string(json_value("a\xFF")), "\"a\xEF\xBF\xBD\"");
}

TEST(JsonWrite, KeepsIntegersExactAndDoublesDistinct) {
  EXPECT_EQ(to_string(json_value(std::numeric_limits<std::int64_t>::max())), "9223372036854775807");
  EXPECT_EQ(to_string(json_value(std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(to_string(json_value(std::uint64_t{18446744073709551615u})), "1.8446744073709552e+19");
  // doubles: shortest round trip, always marked as doubles
  EXPECT_EQ(to_string(json_value(1000.0)), "1000.0");
  EXPECT_EQ(to_string(json_value(-0.0)), "-0.0");
  EXPECT_EQ(to_string(json_value(0.1)), "0.1");
  EXPECT_EQ(to_string(json_value(1e300)), "1e+300");
  EXPECT_EQ(to_string(json_value(std::numeric_limits<double>::quiet_NaN())), "null");
  EXPECT_EQ(to_string(json_value(-std::numeric_limits<double>::infinity())), "null");
}

TEST(JsonWrite, PrettyPrintsWithRowsOnOneLine) {
  const json_value v = parse_ok(R"({"m": [[1, 2], [3, 4]], "o": {"k": "v"}, "e": [], "f": {}})");
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
  const json_value first = parse_ok(text);
  for (const bool pretty : {false, true}) {
    const std::string written = to_string(first, pretty);
    const json_value second = parse_ok(written);
    EXPECT_EQ(second, first) << written;
    EXPECT_EQ(to_string(second, pretty), written);
  }
  EXPECT_TRUE(first["a"].as_array()[4].is_double());
}

TEST(JsonValue, ComparesStructurally) {
  EXPECT_EQ(parse_ok("[1, {\"a\": null}]"), parse_ok("[ 1 , { \"a\" : null } ]"));
  EXPECT_NE(parse_ok("1"), parse_ok("1.0"));
  EXPECT_NE(parse_ok(R"({"a":1,"b":2})"), parse_ok(R"({"b":2,"a":1})"));
  EXPECT_EQ(json_value(std::uint32_t{5}), json_value(std::int64_t{5}));
}

TEST(JsonRead, NamesThePathInErrors) {
  const json_value doc =
      parse_ok(R"({"n": 5, "d": 1.5, "s": "x", "b": true, "a": [1], "neg": -3})");
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
  // step without "expect"); operator[] returns a null value that can be looked into further.
  const json_value v = parse_ok(R"({"step": {"op": "set_bad_node"}, "list": [1], "n": null})");
  EXPECT_TRUE(v["step"]["expect"].is_null());
  EXPECT_TRUE(v["step"]["expect"]["group_after"]["exists"].is_null());
  EXPECT_TRUE(v["list"]["x"].is_null());             // not an object
  EXPECT_TRUE(v["step"]["op"]["deeper"].is_null());  // a string
  EXPECT_TRUE(json_value(3)["x"].is_null());
  EXPECT_EQ(&v["absent"], &v["step"]["absent"]);  // the one shared null
  // An explicit null and an absent member read alike; contains() tells them apart.
  EXPECT_TRUE(v["n"].is_null());
  EXPECT_TRUE(v.contains("n"));
  EXPECT_FALSE(v.contains("absent"));
  EXPECT_FALSE(v["list"].contains("x"));
  EXPECT_EQ(v["step"]["op"].as_string(), "set_bad_node");
}

TEST(JsonObjectReader, ReadsOptionalContainers) {
  const json_value doc =
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
  const json_value doc = parse_ok(R"({"x": {"known": 1, "opt": "s", "extra": 2}})");
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
  EXPECT_TRUE((*v)["nodes"].is_array());
  EXPECT_EQ((*v)["nodes"].as_array().size(), 1213u);
  EXPECT_EQ(parse_ok(to_string(*v)), *v);
}

}  // namespace
}  // namespace hetsched::detail
