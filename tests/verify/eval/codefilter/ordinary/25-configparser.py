"""Reads an INI configuration, changes it and saves it to app.ini."""
import configparser

cfg = configparser.ConfigParser()
cfg.read_string("""
[server]
port = 8080
workers = 4

[database]
name = app
pool = 5
""")
cfg["server"]["workers"] = str(cfg.getint("server", "workers") * 2)
cfg["logging"] = {"level": "info"}
with open("app.ini", "w") as f:
    cfg.write(f)

check = configparser.ConfigParser()
check.read("app.ini")
print({s: dict(check[s]) for s in check.sections()})
assert check.getint("server", "workers") == 8
