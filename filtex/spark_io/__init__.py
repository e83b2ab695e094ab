"""Input: the message table in Spark's types, and messages into Spark.

``layout`` maps the table's Arrow schema to Spark's (and back), ``binary``
decodes columns of AMQP-encoded messages into it on the workers
(``filtex.spark.from_amqp``), ``connectors`` reads the Kafka and Event Hubs
layouts, ``workers`` makes Spark's Python workers run this interpreter. The
Spark engine (``spark/``) evaluates filters over what these build. Needs
pyspark; the public names are re-exported by ``filtex.spark``."""
