// DescriptionProblems — a check shared by the tests of description files (models,
// hardware): each bad file is refused with its problem at the expected line and column.
#pragma once

#include "cost/DescriptionFile.h"

#include <gtest/gtest.h>
#include <initializer_list>

namespace schedc::cost {

struct ProblemCase {
  const char *text;
  int line, column; // 0, 0: the file as a whole
  const char *message;
};

template <class T>
void expectProblems(std::optional<T> (*parse)(const std::string &, FileProblem &),
                    std::initializer_list<ProblemCase> cases) {
  for (const ProblemCase &c : cases) {
    FileProblem problem;
    EXPECT_FALSE(parse(c.text, problem)) << c.text;
    EXPECT_EQ(problem.line, c.line) << c.text;
    EXPECT_EQ(problem.column, c.column) << c.text;
    EXPECT_NE(problem.message.find(c.message), std::string::npos) << problem.message;
  }
}

} // namespace schedc::cost
