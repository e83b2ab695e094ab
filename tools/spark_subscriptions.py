#!/usr/bin/env python3
"""The spark-submit entry point of ``filtex spark``: named subscriptions over a
Parquet archive of messages, one output directory per subscription.

    spark-submit --master yarn --py-files filtex.zip tools/spark_subscriptions.py \\
        --filter eu="region = 'EU'" --filter big="total > 100" --output out/ archive/

(or with the filtex wheel installed where the driver and executors run). The
options are those of ``filtex spark --help``; spark-submit's --master and
--conf decide the session, which this script takes with getOrCreate().
"""
import sys

from filtex.cli import main

if __name__ == "__main__":
    sys.exit(main(["spark", *sys.argv[1:]]))
