// Tokens — small helpers shared by the parse phase: source ranges of ANTLR tokens and rule
// contexts (converting ANTLR's 0-based column once, here), and the user-facing spelling of
// a token kind in diagnostics.
#pragma once

#include "diagnostics/SourceManager.h"

#include <string>

namespace antlr4 {
class Token;
class ParserRuleContext;
namespace dfa {
class Vocabulary;
}
} // namespace antlr4

namespace schedc::parse {

SourceLoc beginOf(const antlr4::Token *t, uint32_t file);
// Location of the token's last character (inclusive).
SourceLoc endOf(const antlr4::Token *t, uint32_t file);
SourceRange rangeOf(const antlr4::Token *t, uint32_t file);
SourceRange rangeOf(antlr4::ParserRuleContext *ctx, uint32_t file);
// The position just after a token (for "expected `;`" after the previous token).
SourceRange after(const antlr4::Token *t, uint32_t file);

// "`;`", "identifier", "end of file", ...
std::string describeTokenType(size_t type, const antlr4::dfa::Vocabulary &vocabulary);
// How a found token is named in a message: "`foo`", "end of file".
std::string describeToken(const antlr4::Token *t);

} // namespace schedc::parse
