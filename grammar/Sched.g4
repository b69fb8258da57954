// Sched.g4 — the grammar of the schedc schedule language (.sched files).
//
// The parser generated from this file is used only by compiler/parse/, which converts the
// parse tree into schedc's own AST (compiler/ast/) and reports syntax errors through the
// diagnostic engine. Nothing else in the compiler sees ANTLR types. The lexer never fails:
// any character it does not know becomes an ERROR_CHAR token that the front end reports.
// See docs/language.md for the language these rules describe.
grammar Sched;

file        : topDecl* EOF ;
topDecl     : importDecl | scheduleDecl | procDecl ;
importDecl  : IMPORT STRING SEMI ;
scheduleDecl: attribute* SCHEDULE ID LPAREN paramList? RPAREN block ;
procDecl    : PROC ID LPAREN paramList? RPAREN block ;
attribute   : AT ID LPAREN (arg (COMMA arg)*)? RPAREN ;
paramList   : param (COMMA param)* COMMA? ;
param       : ID (ASSIGN expr)? ;

block       : LBRACE stmt* RBRACE ;

stmt
  : LET ID ASSIGN expr SEMI                                   # letStmt
  | target (COMMA target)* ASSIGN expr SEMI                   # assignStmt
  | (FREE | DEL) target (COMMA target)* SEMI                  # freeStmt
  | ifChain                                                   # ifStmt
  | FOR ID IN (REVERSED LPAREN expr RPAREN | expr) block      # forStmt
  | MESH LPAREN axis (COMMA axis)* RPAREN SEMI                # meshStmt
  | REQUIRE LPAREN expr (COMMA (STRING | message=expr))? RPAREN SEMI # requireStmt
  | OVERLAP block WITH block                                  # overlapStmt
  | ID block                                                  # namedBlockStmt
  | expr SEMI                                                 # exprStmt
  | block                                                     # blockStmt
  ;
ifChain     : IF expr block (ELSE (block | ifChain))? ;
target      : ID (LBRACKET expr (COMMA expr)* RBRACKET)? ;
axis        : ID ASSIGN expr ;

expr
  : op=(NOT | MINUS | PY_NOT) expr                            # unaryExpr
  | expr op=(STAR | SLASH | PERCENT) expr                     # binaryExpr
  | expr op=(PLUS | MINUS) expr                               # binaryExpr
  | expr op=DOTDOT expr                                       # binaryExpr
  | expr op=(LT | LE | GT | GE) expr                          # binaryExpr
  | expr op=IN expr                                           # binaryExpr
  | expr op=(EQ | NE) expr                                    # binaryExpr
  | expr op=(AND | PY_AND) expr                               # binaryExpr
  | expr op=(OR | PY_OR) expr                                 # binaryExpr
  | ID LPAREN (arg (COMMA arg)*)? RPAREN                      # callExpr
  | ID LBRACKET expr (COMMA expr)* RBRACKET                   # indexExpr
  | ID                                                        # nameExpr
  | INT                                                       # intExpr
  | (TRUE | FALSE)                                            # boolExpr
  | LBRACE (expr (COMMA expr)*)? RBRACE                       # setExpr
  | LBRACKET (expr (COMMA expr)*)? RBRACKET                   # listExpr
  | LPAREN expr RPAREN                                        # parenExpr
  ;
arg         : (ID ASSIGN)? expr ;

// Keywords.
IMPORT   : 'import' ;
SCHEDULE : 'schedule' ;
PROC     : 'proc' ;
LET      : 'let' ;
FREE     : 'free' ;
IF       : 'if' ;
ELSE     : 'else' ;
FOR      : 'for' ;
IN       : 'in' ;
REVERSED : 'reversed' ;
MESH     : 'mesh' ;
REQUIRE  : 'require' ;
OVERLAP  : 'overlap' ;
WITH     : 'with' ;
TRUE     : 'true' ;
FALSE    : 'false' ;
// Python's spellings, reserved so that a schedule written from the puzzles' Python form
// gets one located error saying what to write instead (ParseTreeToAST.cpp).
DEL      : 'del' ;
PY_AND   : 'and' ;
PY_OR    : 'or' ;
PY_NOT   : 'not' ;

// Punctuation and operators.
LPAREN   : '(' ;
RPAREN   : ')' ;
LBRACE   : '{' ;
RBRACE   : '}' ;
LBRACKET : '[' ;
RBRACKET : ']' ;
COMMA    : ',' ;
SEMI     : ';' ;
AT       : '@' ;
DOTDOT   : '..' ;
EQ       : '==' ;
NE       : '!=' ;
LE       : '<=' ;
GE       : '>=' ;
LT       : '<' ;
GT       : '>' ;
AND      : '&&' ;
OR       : '||' ;
NOT      : '!' ;
ASSIGN   : '=' ;
PLUS     : '+' ;
MINUS    : '-' ;
STAR     : '*' ;
SLASH    : '/' ;
PERCENT  : '%' ;

ID       : [a-zA-Z_] [a-zA-Z_0-9]* ;
INT      : [0-9]+ ;
STRING   : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* '"' ;  // escapes: \" and \\ (others are reported)

// Skipped rather than kept on a hidden channel: nothing reads them, and kept they were a
// third of a large file's tokens (5.6 M of which 1.9 M blanks and comments: memory the whole
// parse holds).
LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS            : [ \t\r\n\f]+ -> skip ;

// Never matched by the parser: the front end reports these with a precise message.
// Cannot contain `*/` (the lexer prefers the longest match, which would swallow comments).
UNTERMINATED_COMMENT : '/*' ( ~[*] | '*'+ ~[*/] )* '*'* EOF ;
UNTERMINATED_STRING  : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* '\\'? ;
ERROR_CHAR           : . ;
