"""Aggregate queries on an in-memory SQLite database."""
import sqlite3

con = sqlite3.connect(":memory:")
con.execute("create table sales (city text, amount real)")
con.executemany("insert into sales values (?, ?)",
                [("oslo", 10), ("oslo", 30), ("rome", 5), ("lima", 12),
                 ("rome", 7)])
for city, total, n in con.execute(
        "select city, sum(amount), count(*) from sales group by city "
        "order by sum(amount) desc"):
    print(f"{city:5} {total:6.1f} ({n} sales)")
con.close()
