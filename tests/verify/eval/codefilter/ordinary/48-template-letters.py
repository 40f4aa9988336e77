"""Fills a letter template for each customer with string.Template."""
from string import Template

letter = Template("Dear $name,\nyour order #$order of $amount EUR has shipped.\n")
customers = [{"name": "Ana", "order": 1001, "amount": "19.90"},
             {"name": "Ben", "order": 1002, "amount": "5.00"}]
for c in customers:
    print(letter.substitute(c))
print(Template("Hi $name, $missing").safe_substitute(name="Zoe"))
