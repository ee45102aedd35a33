#!/usr/bin/env python3
"""pypaimon (2.1.0) implementation of the `write <script.json>` contract of
tests/paimon-java (see tests/paimon-java/README.md for the script format).

Differences from the Java reference writer (pypaimon limitations):
  * Row kinds: pypaimon writes every row as +I unless the table has the option
    `rowkind.field` naming a STRING column; this script then stores each row's
    "kind" in that column (overriding the given value), so -D/-U/+U work.
    A non-+I kind without `rowkind.field` is an error.
  * `{"compact": ...}` is not supported (pypaimon has no compaction API).
  * Nested types (ARRAY/MAP/ROW) are parsed, but values inside them must be
    plain JSON (no DECIMAL/DATE/TIMESTAMP/BYTES conversion inside nesting).
stdout: one line `{"snapshot": N}` per commit.
"""
import datetime
import decimal
import json
import re
import sys

import pyarrow as pa

from pypaimon import CatalogFactory, Schema
from pypaimon.schema.data_types import (ArrayType, DataField, DataTypeParser,
                                        MapType, PyarrowFieldParser, RowType)

STATUSES = ["NEW", "PAID", "SHIPPED", "CANCELLED"]
BASE_MILLIS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
CHUNK = 100_000


# ----------------------------------------------------------------- types
def split_top(s):
    out, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


class Ids:
    def __init__(self, start):
        self.n = start

    def next(self):
        self.n += 1
        return self.n


def parse_type(text, ids):
    s = text.strip()
    nullable = True
    if s.upper().endswith("NOT NULL"):
        nullable, s = False, s[: -len("NOT NULL")].strip()
    u = s.upper()
    m = re.match(r"^(ARRAY|MAP|ROW)\s*<(.*)>$", s, re.S | re.I)
    if m:
        kind, inner = m.group(1).upper(), m.group(2)
        if kind == "ARRAY":
            return ArrayType(nullable, parse_type(inner, ids))
        if kind == "MAP":
            k, v = split_top(inner)
            return MapType(nullable, parse_type(k, ids), parse_type(v, ids))
        fields = []
        for part in split_top(inner):
            name, rest = part.strip().split(None, 1)
            fields.append(DataField(ids.next(), name.strip("`"), parse_type(rest, ids)))
        return RowType(nullable, fields)
    t = DataTypeParser.parse_data_type(s if nullable else s + " NOT NULL")
    del u
    return t


# ----------------------------------------------------------------- values
TS_RE = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?$")
UNIT_PER_SEC = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def ts_to_units(text, unit):
    m = TS_RE.match(text.strip())
    if not m:
        raise ValueError("bad timestamp %r" % text)
    y, mo, d, h, mi, sec, frac = m.groups()
    days = (datetime.date(int(y), int(mo), int(d)) - datetime.date(1970, 1, 1)).days
    secs = days * 86400 + int(h) * 3600 + int(mi) * 60 + int(sec or 0)
    nanos = int((frac or "").ljust(9, "0"))
    per = UNIT_PER_SEC[unit]
    return secs * per + nanos // (1_000_000_000 // per)


def column(values, at):
    """Build a pyarrow array of type `at` from JSON values."""
    if pa.types.is_timestamp(at):
        ints = [None if v is None else ts_to_units(v, at.unit) for v in values]
        return pa.array(ints, pa.int64()).cast(at)
    if pa.types.is_decimal(at):
        return pa.array([None if v is None else decimal.Decimal(str(v)) for v in values], at)
    if pa.types.is_date(at):
        return pa.array([None if v is None else datetime.date.fromisoformat(v) for v in values], at)
    if pa.types.is_time(at):
        return pa.array([None if v is None else datetime.time.fromisoformat(v) for v in values], at)
    if pa.types.is_binary(at) or pa.types.is_large_binary(at) or pa.types.is_fixed_size_binary(at):
        return pa.array([None if v is None else bytes.fromhex(v) for v in values], at)
    if pa.types.is_map(at):
        return pa.array([None if v is None else list(v.items()) for v in values], at)
    return pa.array(values, at)


# ----------------------------------------------------------------- main
def main():
    if len(sys.argv) != 3 or sys.argv[1] != "write":
        print("usage: write.py write <script.json>", file=sys.stderr)
        return 2
    with open(sys.argv[2], encoding="utf-8") as f:
        script = json.load(f, parse_float=decimal.Decimal)
    wh, db, name = script["warehouse"], script["database"], script["table"]
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.create_database(db, True)
    ident = "%s.%s" % (db, name)
    create = script.get("create")
    if create:
        ids = Ids(len(create["columns"]) - 1 + 1000)
        fields = [DataField(i, c["name"], parse_type(c["type"], ids))
                  for i, c in enumerate(create["columns"])]
        schema = Schema(fields=fields,
                        partition_keys=create.get("partitionKeys") or [],
                        primary_keys=create.get("primaryKeys") or [],
                        options={k: str(v) for k, v in (create.get("options") or {}).items()})
        catalog.create_table(ident, schema, True)
    table = catalog.get_table(ident)
    arrow_schema = PyarrowFieldParser.from_paimon_schema(table.fields)
    names = [f.name for f in table.fields]
    rk_field = table.options.options.to_map().get("rowkind.field")
    rk_idx = names.index(rk_field) if rk_field else None

    def to_batch(rows):
        cols = list(zip(*rows)) if rows else [[] for _ in names]
        arrays = []
        for i, f in enumerate(arrow_schema):
            vals = [float(v) if isinstance(v, decimal.Decimal) and (pa.types.is_floating(f.type)) else v
                    for v in cols[i]]
            arrays.append(column(vals, f.type))
        return pa.Table.from_arrays(arrays, schema=arrow_schema)

    def with_kind(values, kind):
        values = list(values)
        if rk_idx is not None:
            values[rk_idx] = kind
        elif kind != "+I":
            raise SystemExit("row kind %s needs table option rowkind.field (pypaimon)" % kind)
        return values

    def commit(batches):
        wb = table.new_batch_write_builder()
        w = wb.new_write()
        c = wb.new_commit()
        try:
            for b in batches:
                w.write_arrow(b)
            c.commit(w.prepare_commit())
        finally:
            w.close()
            c.close()
        snap = table.snapshot_manager().get_latest_snapshot()
        print(json.dumps({"snapshot": snap.id if snap else None}), flush=True)

    for entry in script.get("commits", []):
        if "rows" in entry:
            rows = [with_kind(r["values"], r.get("kind", "+I")) for r in entry["rows"]]
            commit([to_batch(rows)])
        elif "generate" in entry:
            g = entry["generate"]
            if g.get("shape", "orders") != "orders" or names[:4] != ["id", "amount", "status", "updated_at"]:
                raise SystemExit("generate: shape 'orders' needs columns id, amount, status, updated_at")
            frm, count, step = g.get("from", 1), g["count"], g.get("step", 1)
            salt, kind = g.get("salt", 0), g.get("kind", "+I")

            def batches():
                for start in range(0, count, CHUNK):
                    rows = []
                    for i in range(start, min(count, start + CHUNK)):
                        k = frm + i * step
                        cents = (k * 7919 + salt * 104729) % 100000
                        ms = BASE_MILLIS + k * 1000 + salt * 60000
                        ts = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
                        row = [k, "%d.%02d" % (cents // 100, cents % 100), STATUSES[(k + salt) % 4],
                               ts.strftime("%Y-%m-%d %H:%M:%S.%f")]
                        row += [None] * (len(names) - 4)
                        rows.append(with_kind(row, kind))
                    yield to_batch(rows)
            commit(batches())
        elif "compact" in entry:
            raise SystemExit("compact is not supported by pypaimon 2.1.0 (no compaction API)")
        else:
            raise SystemExit("unknown commit entry %r" % entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
