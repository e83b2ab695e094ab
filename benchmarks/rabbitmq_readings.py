"""``python -m benchmarks.rabbitmq_readings``: what RabbitMQ's ``h.priority`` costs the
batch engine.

RabbitMQ's ``h.priority`` is the header's priority, else the ``x-basic-priority``
annotation, else 4 (a value computed from two fields, split by the plan into its two
cases); amqp's is the header's, else 4 (one field with a default). Side by side in one
run, the same filters in both dialects: ``filtex.arrow.evaluate`` over a 200,000-row
message table (a third of the messages without a header priority, one in seven with
the annotation), kernels compiled first; the min of interleaved rounds, and the rows
the per-message engine answered. (Per message, ``python -m benchmarks.peer`` compares
the rabbitmq functions with hand-written twins of the same rules.)
"""
from __future__ import annotations

import argparse
import time

import filtex

BATCH = ["h.priority > 4 AND color = 'blue'", "h.priority > 4", "h.priority IN (0, 9)",
         "color = 'blue'"]


def batch(rows: int, rounds: int) -> None:
    import filtex.arrow as fa
    from proton import symbol, ubyte
    messages = [filtex.Message(
        header={"priority": ubyte(i % 10)} if i % 3 else {},
        message_annotations={symbol("x-basic-priority"): ubyte(9)} if i % 7 == 0 else {},
        application_properties={"color": ["blue", "red"][i % 2], "n": i})
        for i in range(rows)]
    table = fa.message_table(messages)
    print(f"{rows:,} rows | amqp ms | rabbitmq ms | rabbitmq rows by the per-message engine\n"
          "|---|---:|---:|---:|")
    for text in BATCH:
        filters = {d: filtex.compile_sql(text, d) for d in ("amqp", "rabbitmq")}
        best = {d: float("inf") for d in filters}
        fallback = 0
        for flt in filters.values():
            fa.evaluate(flt, table)   # kernels compiled
        for _ in range(rounds):
            for dialect, flt in filters.items():
                start = time.perf_counter()
                result = fa.evaluate(flt, table)
                best[dialect] = min(best[dialect], time.perf_counter() - start)
                if dialect == "rabbitmq":
                    fallback = result.fallback_rows
        print(f"| `{text}` | {best['amqp'] * 1e3:.1f} | {best['rabbitmq'] * 1e3:.1f} | "
              f"{fallback:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()
    batch(args.rows, args.rounds)


if __name__ == "__main__":
    main()
