// common/json_object.hpp: one parse for untrusted JSON (empty, too deep, malformed, repeated keys)
// and the object reader's messages (the key's path, what was expected, what was found).
#include "common/json_object.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace softdpu::json;

namespace {

// The path and reason of the Error that `f` throws ("" when it throws none).
template <typename F> std::string error_of(F f)
{
	try {
		f();
	} catch (const Error &error) {
		return error.path + ": " + error.what();
	}
	return "";
}

TEST(JsonNesting, CountsBracketsOutsideStrings)
{
	EXPECT_EQ(nesting_depth("1"), 0u);
	EXPECT_EQ(nesting_depth(R"({"a": [1, {"b": []}]})"), 4u);
	EXPECT_EQ(nesting_depth(R"({"a": "[[[[\"[[["})"), 1u);
	EXPECT_EQ(nesting_depth("]]]][["), 2u) << "stray closers do not go below zero";
}

TEST(JsonParse, ReadsADocument)
{
	const Json document = parse(R"({"a": [1, 2], "b": {"c": true}})");
	EXPECT_EQ(document.at("a").size(), 2u);
	EXPECT_TRUE(document.at("b").at("c").get<bool>());
}

TEST(JsonParse, EmptyAndMalformedTextAreSyntaxErrors)
{
	for (const char *blank : {"", " \n\t\r "}) {
		try {
			parse(blank);
			ADD_FAILURE() << "no error for a blank document";
		} catch (const SyntaxError &error) {
			EXPECT_EQ(error.path, "$");
			EXPECT_STREQ(error.what(), "invalid JSON: the document is empty");
			EXPECT_EQ(error.detail, ": the document is empty");
		}
	}
	try {
		parse("{\n  \"a\": nope }");
		ADD_FAILURE() << "no error for a malformed document";
	} catch (const SyntaxError &error) {
		EXPECT_EQ(std::string(error.what()).rfind("invalid JSON at line 2, column 9: syntax error", 0), 0u)
		    << error.what();
		EXPECT_EQ(error.detail.rfind(" at line 2, column 9: ", 0), 0u) << error.detail;
	}
}

TEST(JsonParse, SyntaxErrorsQuoteTheTextPrintably)
{
	try {
		parse("{\"a\": \"\xff\"}"); // not UTF-8: nlohmann quotes the byte as it is
		ADD_FAILURE() << "no error";
	} catch (const SyntaxError &error) {
		const std::string what = error.what();
		EXPECT_NE(what.find("\\xff"), std::string::npos) << what;
		for (unsigned char c : what)
			EXPECT_TRUE(c >= 0x20 && c < 0x7f) << what;
	}
}

TEST(JsonParse, DeepDocumentsAreRefusedBeforeParsing)
{
	const std::string deep = std::string(65, '[') + std::string(65, ']');
	EXPECT_EQ(error_of([&] { parse(deep); }), "$: document nested deeper than 64 levels");
	EXPECT_EQ(error_of([&] { parse(deep, {.max_depth = 65}); }), "");
	EXPECT_EQ(error_of([&] { parse("[[[1]]]", {.max_depth = 2}); }), "$: document nested deeper than 2 levels");
}

TEST(JsonParse, RepeatedKeysAreRefusedAtTheirPath)
{
	EXPECT_EQ(error_of([] { parse(R"({"a": 1, "a": 2})"); }), "$.a: duplicate key");
	EXPECT_EQ(error_of([] { parse(R"({"list": [{}, {"x": 1, "y": 2, "x": 3}]})"); }), "$.list[1].x: duplicate key");
	EXPECT_EQ(error_of([] { parse(R"({"odd key": 1, "odd key": 2})"); }), "$[\"odd key\"]: duplicate key");
	EXPECT_EQ(error_of([] { parse(R"([{"a": 1}, {"a": 2}])"); }), "") << "the same key in two objects";
	const Json last_wins = parse(R"({"a": 1, "a": 2})", {.reject_duplicate_keys = false});
	EXPECT_EQ(last_wins.at("a"), 2);
}

TEST(JsonPath, SegmentsNeverCarryRawBytes)
{
	EXPECT_EQ(member_segment("dma_memcpy"), ".dma_memcpy");
	EXPECT_EQ(member_segment(""), "[\"\"]");
	EXPECT_EQ(member_segment("a.b"), "[\"a.b\"]");
	EXPECT_EQ(member_segment("q\"\n"), "[\"q\\x22\\x0a\"]");
	EXPECT_EQ(member_segment(std::string(64, 'k')), "[\"" + std::string(64, 'k') + "\"]");
	EXPECT_EQ(element_segment(7), "[7]");
	EXPECT_EQ(shown(std::string(81, 'v')), "\"" + std::string(80, 'v') + "...\"");
	EXPECT_EQ(printable("a\x7f", 10), "a\\x7f");
}

TEST(JsonObjectReader, RefusesNonObjectsAndUnknownKeys)
{
	const Json array = Json::array();
	EXPECT_EQ(error_of([&] { ObjectReader(array, "$.host", {}); }), "$.host: expected an object, got array");
	const Json object = parse(R"({"name": "x", "extra": 1})");
	EXPECT_EQ(error_of([&] { ObjectReader(object, "$", {"name"}); }), "$.extra: unknown key");
	EXPECT_EQ(error_of([&] { ObjectReader(object, "$", {"name", "extra"}); }), "");
}

TEST(JsonObjectReader, TypedMembers)
{
	const Json object =
	    parse(R"({"s": "text", "b": false, "n": 7, "neg": -3, "f": 1.5, "a": [1], "big": 18446744073709551615})");
	const ObjectReader reader(object, "$.x", {"s", "b", "n", "neg", "f", "a", "big"});
	EXPECT_EQ(reader.string("s", true), "text");
	EXPECT_EQ(reader.string("absent", false), std::nullopt);
	EXPECT_EQ(reader.boolean("b"), false);
	EXPECT_EQ(reader.unsigned_integer("n", 1, 10), 7u);
	EXPECT_EQ(reader.unsigned_integer("big", 0, UINT64_MAX), UINT64_MAX);
	ASSERT_NE(reader.array("a", true), nullptr);
	EXPECT_EQ(reader.array("a", true)->size(), 1u);
	EXPECT_EQ(reader.array("absent", false), nullptr);
	EXPECT_EQ(reader.member_path("s"), "$.x.s");

	EXPECT_EQ(error_of([&] { reader.string("absent", true); }), "$.x.absent: missing required key");
	EXPECT_EQ(error_of([&] { reader.array("absent", true); }), "$.x.absent: missing required key");
	EXPECT_EQ(error_of([&] { reader.string("n", true); }), "$.x.n: expected a string, got number");
	EXPECT_EQ(error_of([&] { reader.boolean("s"); }), "$.x.s: expected true or false, got string");
	EXPECT_EQ(error_of([&] { reader.array("b", false); }), "$.x.b: expected an array, got boolean");
	EXPECT_EQ(error_of([&] { reader.unsigned_integer("neg", 0, 10); }),
		  "$.x.neg: expected a non-negative integer, got -3");
	EXPECT_EQ(error_of([&] { reader.unsigned_integer("f", 0, 10); }), "$.x.f: expected an integer, got number");
	EXPECT_EQ(error_of([&] { reader.unsigned_integer("n", 8, 10); }), "$.x.n: value 7 out of range [8, 10]");
	EXPECT_EQ(error_of([&] { reader.unsigned_integer("n", 0, 5, "a small number"); }),
		  "$.x.n: value 7 out of range [0, 5] (a small number)");
}

TEST(JsonDismantle, EmptiesNestedContainers)
{
	Json document = parse(R"({"a": [[1, {"b": [2, 3]}], {}], "c": "d"})");
	{
		const DismantledOnExit dismantled(document);
	}
	EXPECT_TRUE(document.is_object());
	EXPECT_TRUE(document.empty());
	Json scalar = 5;
	dismantle(scalar);
	EXPECT_EQ(scalar, 5) << "scalars are left as they are";
}

} // namespace
