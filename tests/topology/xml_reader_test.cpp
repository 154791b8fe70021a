// SPDX-License-Identifier: MIT
// Tests of the private strict XML reader used by the topology importers.
#include "../../src/topology/xml_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "support/matchers.hpp"

namespace hetsched::detail {
namespace {

using ::hetsched::testing::ErrorContains;
using ::hetsched::testing::HasErrc;
using ::hetsched::testing::IsOk;
using ::testing::AllOf;

TEST(XmlReader, ParsesElementsAttributesAndLines) {
  const std::string text =
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!-- leading comment -->\n"
      "<system version='1'>\n"
      "  <cpu numaid=\"0\" affinity = 'ff'>text is ignored\n"
      "    <pci busid=\"0000:01:00.0\"/>\n"
      "    <!-- <pci busid=\"commented out\"/> -->\n"
      "    <![CDATA[ <not> an element ]]>\n"
      "    <pci busid=\"0000:02:00.0\" ></pci >\n"
      "  </cpu>\n"
      "</system>\n"
      "<!-- trailing comment -->\n";
  auto root = parse_xml(text);
  ASSERT_THAT(root, IsOk());
  EXPECT_EQ(root->name, "system");
  EXPECT_EQ(root->line, 3u);
  ASSERT_NE(root->attribute("version"), nullptr);
  EXPECT_EQ(*root->attribute("version"), "1");
  EXPECT_EQ(root->attribute("missing"), nullptr);
  ASSERT_EQ(root->children.size(), 1u);
  const auto& cpu = root->children[0];
  EXPECT_EQ(cpu.line, 4u);
  ASSERT_EQ(cpu.attributes.size(), 2u);
  EXPECT_EQ(cpu.attributes[1].name, "affinity");
  EXPECT_EQ(cpu.attributes[1].value, "ff");
  ASSERT_EQ(cpu.children.size(), 2u);
  EXPECT_EQ(cpu.children[0].line, 5u);
  EXPECT_EQ(*cpu.children[0].attribute("busid"), "0000:01:00.0");
  EXPECT_EQ(cpu.children[1].line, 8u);
  EXPECT_TRUE(cpu.children[1].children.empty());
}

TEST(XmlReader, DecodesEntitiesAndNormalizesWhitespace) {
  auto root = parse_xml(
      "<a v=\"&lt;&gt;&amp;&quot;&apos;\" n=\"&#65;&#x42;&#x20AC;\" w=\"x\ty\nz\" q='say "
      "\"hi\"'/>");
  ASSERT_THAT(root, IsOk());
  EXPECT_EQ(*root->attribute("v"), "<>&\"'");
  EXPECT_EQ(*root->attribute("n"), "AB\xE2\x82\xAC");  // U+20AC in UTF-8
  EXPECT_EQ(*root->attribute("w"), "x y z");
  EXPECT_EQ(*root->attribute("q"), "say \"hi\"");
}

TEST(XmlReader, StructuralErrorsNameTheLine) {
  // empty and comment-only documents
  EXPECT_THAT(parse_xml(""),
              AllOf(HasErrc(errc::invalid_argument), ErrorContains("no root element")));
  EXPECT_THAT(parse_xml("  \n<!-- x -->\n"),
              AllOf(ErrorContains("line 3"), ErrorContains("no root")));
  // unclosed element at the end of input
  EXPECT_THAT(parse_xml("<a>\n<b>\n</b>\n"),
              AllOf(ErrorContains("<a> opened at line 1 is not closed"), ErrorContains("line 4")));
  // mismatched end tag
  EXPECT_THAT(
      parse_xml("<a>\n<b>\n</c>\n</a>"),
      AllOf(ErrorContains("line 3"), ErrorContains("</c>"), ErrorContains("<b> opened at line 2")));
  // truncated inside a tag, a value, a comment, an end tag
  EXPECT_THAT(parse_xml("<a>\n<b x=\"1\""),
              AllOf(ErrorContains("line 2"), ErrorContains("end of input")));
  EXPECT_THAT(parse_xml("<a>\n<b x=\"1"),
              AllOf(ErrorContains("line 2"), ErrorContains("unterminated")));
  EXPECT_THAT(parse_xml("<a>\n<!-- never closed"),
              AllOf(ErrorContains("line 2"), ErrorContains("comment")));
  EXPECT_THAT(parse_xml("<a>\n</a"), AllOf(ErrorContains("line 2"), ErrorContains("end of input")));
  EXPECT_THAT(parse_xml("<"), ErrorContains("end of input"));
  // duplicate attribute
  EXPECT_THAT(parse_xml("<a>\n<b x=\"1\" y=\"2\" x=\"3\"/></a>"),
              AllOf(ErrorContains("line 2"), ErrorContains("duplicate attribute 'x'")));
  // garbage after the root
  EXPECT_THAT(parse_xml("<a/>\n<b/>"),
              AllOf(ErrorContains("line 2"), ErrorContains("after the end of the root")));
  EXPECT_THAT(parse_xml("<a></a>\ntrailing"),
              AllOf(ErrorContains("line 2"), ErrorContains("after the end")));
  // text before the root, DOCTYPE, misplaced declarations and processing instructions
  EXPECT_THAT(parse_xml("hello <a/>"), ErrorContains("text before the root"));
  EXPECT_THAT(parse_xml("<!DOCTYPE a>\n<a/>"), ErrorContains("DOCTYPE"));
  EXPECT_THAT(parse_xml("<a/>\n<?xml version=\"1.0\"?>"), ErrorContains("line 2"));
  EXPECT_THAT(parse_xml("<a><?pi x?></a>"), ErrorContains("processing instructions"));
}

TEST(XmlReader, LexicalErrorsNameTheLine) {
  EXPECT_THAT(parse_xml("<a\nb=\"1\" c=\"&bogus;\"/>"),
              AllOf(ErrorContains("line 2"), ErrorContains("unknown entity '&bogus;'")));
  EXPECT_THAT(parse_xml("<a b=\"fish & chips\"/>"), ErrorContains("'&'"));
  EXPECT_THAT(parse_xml("<a b=\"&#0;\"/>"), ErrorContains("not an XML character"));
  EXPECT_THAT(parse_xml("<a b=\"&#xD800;\"/>"), ErrorContains("not an XML character"));
  EXPECT_THAT(parse_xml("<a b=\"&#x110000;\"/>"), ErrorContains("out of range"));
  EXPECT_THAT(parse_xml("<a b=\"&#x;\"/>"), ErrorContains("character reference"));
  EXPECT_THAT(parse_xml("<a b=\"&#12a;\"/>"), ErrorContains("character reference"));
  EXPECT_THAT(parse_xml("<a b=\"x<y\"/>"), ErrorContains("'<' inside an attribute value"));
  EXPECT_THAT(parse_xml("<a b=1/>"), ErrorContains("must be quoted"));
  EXPECT_THAT(parse_xml("<a b/>"), ErrorContains("expected '='"));
  EXPECT_THAT(parse_xml("<a b=\"1\"c=\"2\"/>"), ErrorContains("missing whitespace"));
  EXPECT_THAT(parse_xml("<a / >"), ErrorContains("expected '>' after '/'"));
  EXPECT_THAT(parse_xml("<1a/>"), ErrorContains("element name"));
  EXPECT_THAT(parse_xml("<a>\n\n<b>\x01</b></a>"),
              AllOf(ErrorContains("line 3"), ErrorContains("control character 0x01")));
  EXPECT_THAT(parse_xml(std::string("<a>\0</a>", 8)), ErrorContains("control character 0x00"));
}

TEST(XmlReader, LimitsGiveOutOfRange) {
  xml_limits limits;
  limits.max_bytes = 10;
  EXPECT_THAT(parse_xml("<a>      </a>", limits),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("10")));

  std::string deep;
  for (int i = 0; i < 64; ++i) deep += "<e>";
  for (int i = 0; i < 64; ++i) deep += "</e>";
  EXPECT_THAT(parse_xml(deep), IsOk());  // exactly the default limit of 64
  EXPECT_THAT(parse_xml("<e>" + deep + "</e>"),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("deeper than 64")));
  std::string hostile;
  for (int i = 0; i < 100000; ++i) hostile += "<e>";
  EXPECT_THAT(parse_xml(hostile), HasErrc(errc::out_of_range));

  EXPECT_THAT(parse_xml("<a " + std::string(257, 'n') + "=\"1\"/>"),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("longer than 256")));
  EXPECT_THAT(parse_xml("<" + std::string(256, 'n') + "/>"), IsOk());

  limits = xml_limits{};
  limits.max_nodes = 3;
  EXPECT_THAT(parse_xml("<a x=\"1\"><b/></a>", limits), IsOk());
  EXPECT_THAT(parse_xml("<a x=\"1\" y=\"2\"><b/></a>", limits),
              AllOf(HasErrc(errc::out_of_range), ErrorContains("more than 3")));
}

}  // namespace
}  // namespace hetsched::detail
