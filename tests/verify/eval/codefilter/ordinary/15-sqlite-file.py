"""Keeps a small task list in a SQLite file in the working directory."""
import sqlite3

con = sqlite3.connect("tasks.db")
con.execute("create table if not exists tasks (id integer primary key, "
            "title text, done integer default 0)")
con.executemany("insert into tasks (title) values (?)",
                [("write report",), ("review PR",), ("water plants",)])
con.execute("update tasks set done = 1 where title = 'review PR'")
con.commit()
open_tasks = [t for (t,) in con.execute(
    "select title from tasks where done = 0 order by id")]
print("open:", open_tasks)
con.close()
