"""Products whose name contains argv's text, from data/shop.sqlite3 opened read-only."""
import json
import sqlite3
import sys

text = sys.argv[-1]
db = sqlite3.connect("file:data/shop.sqlite3?mode=ro", uri=True)
rows = db.execute(
    "SELECT name, price_cents FROM products WHERE instr(lower(name), lower(?)) > 0 ORDER BY name",
    (text,),
).fetchall()
print(json.dumps({"products": [{"name": name, "price": cents / 100} for name, cents in rows]}))
