"""A tiny arithmetic calculator: tokenizer and recursive-descent parser."""
import re

TOKEN = re.compile(r"\s*(?:(\d+\.?\d*)|(.))")


def tokens(text):
    for number, op in TOKEN.findall(text):
        yield ("num", float(number)) if number else ("op", op)
    yield ("end", None)


class Parser:
    def __init__(self, text):
        self.toks = list(tokens(text))
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def take(self):
        self.i += 1
        return self.toks[self.i - 1]

    def expr(self):
        v = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            v = v + self.term() if self.take()[1] == "+" else v - self.term()
        return v

    def term(self):
        v = self.factor()
        while self.peek() in (("op", "*"), ("op", "/")):
            v = v * self.factor() if self.take()[1] == "*" else v / self.factor()
        return v

    def factor(self):
        kind, val = self.take()
        if kind == "num":
            return val
        if val == "-":
            return -self.factor()
        if val == "(":
            v = self.expr()
            self.take()
            return v
        raise SyntaxError(f"unexpected {val!r}")


for e in ["1 + 2 * 3", "(1 + 2) * 3", "-4 / (2 - 4)", "2 * (3 + (4 - 1)) / 3"]:
    print(f"{e} = {Parser(e).expr():g}")
assert Parser("2 * (3 + (4 - 1)) / 3").expr() == 4
