"""The filtex command line: check, match, why; exit codes; the console script."""
from __future__ import annotations

import io
import json
import os
import re
import select
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import filtex
from filtex.cli import main
from filtex.cli.progress import Progress
from filtex.files import read_messages, read_records

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
ORDERS_AMQP, ORDERS_JSONL = EXAMPLES / "orders.amqp", EXAMPLES / "orders.jsonl"
EU_BIG = "region = 'EU' AND total > 100"   # 21 of the 50 orders (examples/README.md)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def expected_raws(path: Path, text: str, invert: bool = False) -> list[bytes]:
    """The records of ``path`` the filter selects, found without the CLI."""
    flt = filtex.compile_sql(text)
    return [r.raw for r in read_records(path) if (flt.evaluate(r.message) is True) != invert]


def frames(raws: list[bytes]) -> bytes:
    return b"".join(struct.pack(">I", len(raw)) + raw for raw in raws)


def stdin_bytes(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


# --- check ---------------------------------------------------------------------------------

def test_check_ok(capsys):
    code, out, err = run(capsys, "check", "color = 'blue' AND h.priority > 4")
    assert code == 0 and out.startswith("ok: sql filter, amqp dialect") and err == ""


def test_check_error_shows_the_line_and_a_caret_under_the_column(capsys):
    text = "color = 'blue'\n  AND h.colour > 4\n  AND total > 5"
    code, out, err = run(capsys, "check", text)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == ("filtex: error: line 2, column 9: 'colour' is not a field of the "
                        "header section")
    shown, mark = lines[1], lines[2]
    assert shown.strip() == "AND h.colour > 4"
    assert mark.index("^") == shown.index("colour")


def test_check_error_on_a_long_line_shows_a_window_around_the_column(capsys):
    text = "a = 1 AND " * 40 + "h.nosuch = 1"
    code, _, err = run(capsys, "check", text)
    shown, mark = err.splitlines()[1:3]
    assert code == 2 and "..." in shown and len(shown) < 120
    assert shown[mark.index("^"):].startswith("nosuch")


def test_check_dialects_and_resource_limits(capsys):
    assert run(capsys, "check", "--dialect", "jms", "JMSPriority > 4")[0] == 0
    code, _, err = run(capsys, "check", "--dialect", "rabbitmq", "a = 1 AND " * 300 + "b = 1")
    assert code == 2 and "amqp:resource-limit-exceeded" in err


def test_check_explain_prints_the_tree_and_the_python(capsys):
    code, out, _ = run(capsys, "check", "--explain", "color = 'blue' AND h.priority > 4")
    assert code == 0
    tree, python = out.split("python:\n")
    assert tree.splitlines() == [
        "tree:",
        "  Scope bool (amqp dialect): color = 'blue' AND h.priority > 4",
        "    And bool: color = 'blue' AND h.priority > 4",
        "      Compare bool: color = 'blue'",
        "        Field any: color",
        "        Literal string: 'blue'",
        "      Compare bool: h.priority > 4",
        "        Field ubyte: h.priority",
        "        Literal int: 4"]
    assert python.startswith("def evaluate(message")


def test_check_filter_json_described_filter(capsys):
    spec = {"described": "amqp:application-properties-filter",
            "value": {"color": "blue", "region": "&p:EU-"}}
    code, out, err = run(capsys, "check", "--filter-json", "--explain", json.dumps(spec))
    assert code == 0 and err == ""
    assert "PropertyMatch bool: region matches '&p:EU-'" in out
    assert "ok: amqp:application-properties-filter filter" in out


def test_check_filter_json_set_warns_about_its_sql_members(capsys):
    spec = {"set": {
        "a": {"described": "amqp:sql-filter", "value": "color = 'x'\n  OR y = NULL"},
        "b": {"described": "amqp:header-filter", "value": {
            "priority": {"@type": "ubyte", "value": 4}}}}}
    code, out, err = run(capsys, "check", "--filter-json", json.dumps(spec))
    assert code == 0 and "ok: filter-set filter, amqp dialect (1 warning)" in out
    first, shown, mark = err.splitlines()[:3]
    assert first.startswith("filtex: warning: line 2, column 10: y = NULL is always unknown")
    assert shown.strip() == "OR y = NULL" and shown[mark.index("^")] == "N"


def test_check_filter_json_sql_error_points_into_the_sql(capsys):
    code, _, err = run(capsys, "check", "--filter-json", '{"sql": "a = = 1"}')
    assert code == 2 and "line 1, column 5" in err and err.splitlines()[2].index("^") == 8


@pytest.mark.parametrize("text, fragment", [
    ('{"set": ', "invalid JSON, line 1, column 9"),
    ('[1, 2]', 'a filter is {"sql": TEXT}'),
    ('{"described": "amqp:nosuch-filter", "value": 1}', "not implemented"),
    ('{"set": {"a": {"described": "amqp:header-filter", "value": {"priority": "x"}}}}',
     "cannot hold"),
])
def test_check_bad_filter_json(capsys, text, fragment):
    code, _, err = run(capsys, "check", "--filter-json", text)
    assert code == 2 and fragment in err


def test_check_warnings_go_to_stderr_with_a_caret_and_exit_0(capsys):
    code, out, err = run(capsys, "check", "sys.Label = 'x' AND h.priority = 'high'")
    assert code == 0 and "(2 warnings)" in out
    lines = err.splitlines()
    assert lines[0].startswith("filtex: warning: line 1, column 1: sys.Label reads")
    assert "did you mean p.subject?" in lines[0]
    assert lines[2].index("^") == lines[1].index("sys")
    assert lines[3].startswith("filtex: warning: line 1, column 34: h.priority = 'high'")
    assert lines[5].index("^") == lines[4].index("'high'")


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "--dialect", "sql92", "a = 1"], ["nosuch"], [],
    ["match", "--reasons", "many", "x"], ["match", "--format", "xml", "x"]])
def test_option_errors_exit_2(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as raised:   # argparse's own errors
        code = raised.code
    assert code == 2 and "error:" in capsys.readouterr().err


# --- match: selecting -------------------------------------------------------------------

@pytest.mark.parametrize("path", [ORDERS_AMQP, ORDERS_JSONL])
def test_match_writes_the_matching_records_byte_for_byte(capsys, tmp_path, path):
    out = tmp_path / ("out" + path.suffix)
    code, stdout, err = run(capsys, "match", EU_BIG, path, "-o", out)
    assert (code, stdout, err) == (0, "", "")
    wanted = expected_raws(path, EU_BIG)
    assert len(wanted) == 21
    data = out.read_bytes()
    assert data == (frames(wanted) if path.suffix == ".amqp" else b"\n".join(wanted) + b"\n")
    assert [r.raw for r in read_records(out)] == wanted   # and it reads back


def test_match_to_stdout(capsysbinary):
    assert main(["match", EU_BIG, str(ORDERS_JSONL)]) == 0
    out, err = capsysbinary.readouterr()
    assert out == b"\n".join(expected_raws(ORDERS_JSONL, EU_BIG)) + b"\n" and err == b""


def test_match_from_stdin_with_and_without_format(capsysbinary, monkeypatch):
    for argv in (["match", EU_BIG], ["match", EU_BIG, "-", "--format", "amqp"]):
        stdin_bytes(monkeypatch, ORDERS_AMQP.read_bytes())
        assert main(argv) == 0
        assert capsysbinary.readouterr().out == frames(expected_raws(ORDERS_AMQP, EU_BIG))


def test_match_format_forced_wrong_reports_every_record(capsys):
    code, _, err = run(capsys, "match", "--count", "--format", "amqp", "x = 1", ORDERS_JSONL)
    assert code == 2 and "unreadable record" in err and "the rest of the input" in err


def test_match_invert_selects_what_would_not_be_delivered(capsys, tmp_path):
    out = tmp_path / "rest.amqp"
    assert run(capsys, "match", "--invert", EU_BIG, ORDERS_AMQP, "-o", out)[0] == 0
    assert out.read_bytes() == frames(expected_raws(ORDERS_AMQP, EU_BIG, invert=True))


def test_match_several_inputs_of_one_format(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run(capsys, "match", EU_BIG, ORDERS_JSONL, ORDERS_JSONL, "-o", out)[0] == 0
    assert len(out.read_bytes().splitlines()) == 42


def test_match_an_input_of_the_other_format_is_skipped(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "match", EU_BIG, ORDERS_JSONL, ORDERS_AMQP, "-o", out)
    assert code == 2 and "orders.amqp: skipped: its messages are amqp, the output is jsonl" in err
    assert len(out.read_bytes().splitlines()) == 21


def test_match_refuses_to_overwrite_an_input_or_write_frames_to_a_terminal(
        capsys, tmp_path, monkeypatch):
    copy = tmp_path / "orders.amqp"
    copy.write_bytes(ORDERS_AMQP.read_bytes())
    code, _, err = run(capsys, "match", EU_BIG, copy, "-o", copy)
    assert code == 2 and "would overwrite an input" in err
    assert copy.read_bytes() == ORDERS_AMQP.read_bytes()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, _, err = run(capsys, "match", EU_BIG, ORDERS_AMQP)
    assert code == 2 and "not writing framed AMQP messages to a terminal" in err


# --- match: counting ----------------------------------------------------------------------

def table(out: str) -> dict[str, list[str]]:
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["subscription", "matched", "not", "matched", "unknown", "msgs/s"]
    return {row[0]: row[1:4] for row in rows[1:]}


def test_match_count_and_exit_codes(capsys):
    code, out, err = run(capsys, "match", "--count", EU_BIG, ORDERS_AMQP)
    assert code == 0 and table(out) == {"filter": ["21", "29", "0"]}
    assert "50 messages in" in err and "subscription-evaluations/s" in err
    code, out, _ = run(capsys, "match", "--count", "region = 'Mars'", ORDERS_AMQP)
    assert code == 1 and table(out) == {"filter": ["0", "50", "0"]}
    assert run(capsys, "match", "--count", "--invert", "region = 'Mars'", ORDERS_AMQP)[0] == 0
    # as grep, with or without --count: 1 when nothing is selected
    assert run(capsys, "match", "region = 'Mars'", ORDERS_AMQP)[:2] == (1, "")
    assert run(capsys, "match", EU_BIG, ORDERS_AMQP, "-o", os.devnull)[0] == 0


def test_match_several_subscriptions_count(capsys):
    code, out, err = run(
        capsys, "match", "--count", "--filter", f"eu={EU_BIG}",
        "--filter", "express=express AND h.priority >= 8",
        "--filter", "shipped=p.subject LIKE 'order.%ed' AND currency = 'USD'",
        "--filter", "odd=total > 'x'", ORDERS_JSONL, ORDERS_AMQP)
    assert code == 0
    assert table(out) == {"eu": ["42", "58", "0"], "express": ["12", "88", "0"],
                          "shipped": ["34", "66", "0"], "odd": ["0", "0", "100"]}
    assert "odd: 100 unknown results (not delivered):" in err
    assert "100  cannot compare floating-point with string" in err
    assert "100 messages in" in err


def test_match_several_subscriptions_write_one_file_each(capsys, tmp_path):
    template = str(tmp_path / "{name}.amqp")
    code, _, _ = run(capsys, "match", "--filter", f"eu={EU_BIG}",
                     "--filter", "alarm=express AND h.priority >= 8", ORDERS_AMQP,
                     "-o", template)
    assert code == 0
    assert (tmp_path / "eu.amqp").read_bytes() == frames(expected_raws(ORDERS_AMQP, EU_BIG))
    express = expected_raws(ORDERS_AMQP, "express AND h.priority >= 8")
    assert (tmp_path / "alarm.amqp").read_bytes() == frames(express) and len(express) == 6


@pytest.mark.parametrize("argv, fragment", [
    (["--filter", "a=x = 1", "--filter", "b=y = 1"], "-o with {name}"),
    (["--filter", "a=x = 1", "--filter", "b=y = 1", "-o", "out.amqp"], "-o needs {name}"),
    (["--filter", "a=x = 1", "--filter", "a=y = 1", "--count"], "given twice"),
    (["--filter", "region = 'EU'"], "--filter takes NAME=TEXT"),
    (["--filter", "bad=x = = 1", "--count"], "bad: line 1, column 5"),
    ([], "match needs a FILTER"),
])
def test_match_bad_subscriptions_exit_2(capsys, argv, fragment):
    code, _, err = run(capsys, "match", *argv, ORDERS_AMQP) if argv else \
        run(capsys, "match")
    assert code == 2 and fragment in err


def test_match_unknown_results_are_reported_with_sampled_reasons(capsys):
    code, _, err = run(capsys, "match", "--count", "nosuch > 1 OR total > 'x'", ORDERS_AMQP)
    assert code == 1
    assert "filter: 50 unknown results (not delivered):" in err
    assert "50  cannot compare floating-point with string" in err
    _, _, err = run(capsys, "match", "--count", "--reasons", "5", "nosuch > 1", ORDERS_AMQP)
    assert "50 unknown results (not delivered); reasons of the first 5:" in err
    assert "5  no value for nosuch" in err
    _, _, err = run(capsys, "match", "--count", "--reasons", "0", "nosuch > 1", ORDERS_AMQP)
    assert "reasons not sampled" in err


# --- match: unreadable input ------------------------------------------------------------------

def test_match_truncated_frame_is_reported_and_the_rest_counted(capsys, tmp_path):
    data = ORDERS_AMQP.read_bytes()
    cut = tmp_path / "cut.amqp"
    cut.write_bytes(data[:20000])
    code, out, err = run(capsys, "match", "--count", "region = 'EU'", cut)
    complete = list(read_records(cut))[:-1]
    assert code == 2   # every complete frame counted, and the cut reported
    counts = table(out)["filter"]
    assert int(counts[0]) + int(counts[1]) == len(complete) == 30
    size = struct.unpack(">I", data[19954:19958])[0]
    assert f"cut.amqp: frame 31 at byte 19954: truncated frame: {size} bytes announced" in err
    assert "1 unreadable record skipped:" in err


def bad_jsonl(tmp_path) -> Path:
    lines = ORDERS_JSONL.read_bytes().splitlines()
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines[:3] + [b'{"header": bad', b'{"nosuch": {}}']
                                + lines[3:]) + b"\n")
    return path


def test_match_bad_json_lines_are_reported_and_the_run_goes_on(capsys, tmp_path):
    path = bad_jsonl(tmp_path)
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "match", EU_BIG, path, "-o", out)
    assert code == 2   # the run went through; the unreadable lines make it exit 2
    assert "bad.jsonl: line 4: invalid JSON" in err
    assert "bad.jsonl: line 5: not a message: " in err and "'nosuch'" in err
    assert "2 unreadable records skipped:" in err
    assert out.read_bytes().splitlines() == expected_raws(ORDERS_JSONL, EU_BIG)


def test_match_strict_stops_at_the_first_unreadable_record(capsys, tmp_path):
    path = bad_jsonl(tmp_path)
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "match", "--strict", "region = 'EU'", path, "-o", out)
    assert code == 2 and "line 4: invalid JSON" in err and "line 5" not in err
    first3 = [r.raw for r in read_records(ORDERS_JSONL)][:3]
    wanted = [raw for raw in first3 if b'"region":"EU"' in raw]
    assert out.read_bytes().splitlines() == wanted


def test_match_unreadable_inputs_exit_2_and_the_others_are_read(capsys, tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"garbage\n")
    code, out, err = run(capsys, "match", "--count", EU_BIG, tmp_path / "missing.amqp",
                         garbage, ORDERS_AMQP)
    assert code == 2
    assert "missing.amqp: cannot read: No such file or directory" in err
    assert "garbage.bin: line 1: invalid JSON" in err   # read as JSON lines, reported
    assert table(out) == {"filter": ["21", "29", "0"]}


def test_match_empty_input(capsys, monkeypatch):
    stdin_bytes(monkeypatch, b"")
    assert run(capsys, "match", "--count", EU_BIG) [0] == 1


# --- progress ---------------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_only_on_a_terminal():
    quiet = Progress(io.StringIO())
    quiet.next_draw = 0
    quiet.update(10, 1, 2)
    assert not quiet.enabled and quiet.stream.getvalue() == ""
    terminal = Terminal()
    progress = Progress(terminal)
    progress.update(10, 1, 2)            # too soon after the start: nothing yet
    assert terminal.getvalue() == ""
    progress.next_draw = 0
    progress.update(1000, 300, 7)
    line = terminal.getvalue()
    assert line.startswith("\r") and "1,000 messages" in line and "msgs/s" in line
    assert "matched 300" in line and "unknown 7" in line
    progress.clear()
    assert terminal.getvalue().endswith("\r") and progress.width == 0


def test_match_never_draws_progress_when_stderr_is_not_a_terminal(capsys):
    _, _, err = run(capsys, "match", "--count", EU_BIG, ORDERS_AMQP)
    assert "\r" not in err


# --- why ---------------------------------------------------------------------------------------

def test_why_true_false_and_unknown(capsys):
    message = '{"application-properties": {"region": "EU", "total": 150.0}}'
    code, out, _ = run(capsys, "why", EU_BIG, message)
    assert code == 0 and out.splitlines()[:3] == [
        "result: true", f"true      {EU_BIG}", "  true      region = 'EU'"]
    code, out, _ = run(capsys, "why", EU_BIG, ORDERS_JSONL)   # its first message: 64.78
    assert code == 1 and out.startswith("result: false\n")
    assert "  false     total > 100\n    64.78     total" in out
    code, out, _ = run(capsys, "why", "region = 'EU' AND nosuch > 1", ORDERS_AMQP)
    assert code == 1 and out.startswith("result: unknown (no value for nosuch)")
    code, out, _ = run(capsys, "why", "total > 'x'", ORDERS_AMQP)
    assert code == 1 and out.startswith("result: unknown (cannot compare floating-point "
                                        "with string)")
    assert "^ cannot compare floating-point with string" in out


def test_options_may_sit_among_the_operands_of_every_command(capsys):
    """As in grep: ``filtex why FILTER --index 2 FILE``, ``filtex check FILTER
    --dialect jms``, as ``match`` always took them."""
    code, out, _ = run(capsys, "why", EU_BIG, "--index", "2", ORDERS_JSONL)
    assert code in (0, 1) and out.startswith("message 2 (line 2)\n")
    code, out, _ = run(capsys, "why", EU_BIG, "--index", "2", "--", ORDERS_JSONL)
    assert out.startswith("message 2 (line 2)\n")
    code, _, err = run(capsys, "check", "JMSPriority > 4", "--dialect", "jms")
    assert code == 0 and "jms dialect" in err + _


def test_why_reads_stdin_and_a_pretty_printed_file(capsys, monkeypatch, tmp_path):
    stdin_bytes(monkeypatch, ORDERS_AMQP.read_bytes())
    assert run(capsys, "why", "region = 'EU'", "-")[0] == 0
    pretty = tmp_path / "message.json"
    pretty.write_text(json.dumps({"application-properties": {"region": "EU"}}, indent=2))
    assert run(capsys, "why", "region = 'EU'", pretty)[0] == 0
    code, out, _ = run(capsys, "why", "--filter-json", json.dumps(
        {"described": "amqp:application-properties-filter", "value": {"region": "&p:E"}}),
        pretty)
    assert code == 0 and "true      region matches '&p:E'" in out


def test_why_no_local_reads_the_receiving_connection(capsys):
    spec = json.dumps({"described": "apache.org:no-local-filter:list", "value": []})
    message = '{"connection": "c1", "receiving-connection": "c1"}'
    assert run(capsys, "why", "--filter-json", spec, message)[0] == 1
    assert run(capsys, "why", "--filter-json", spec, message.replace('"c1"}', '"c2"}'))[0] == 0


@pytest.mark.parametrize("filter_text, message, fragment", [
    ("a = = 1", "{}", "line 1, column 5"),
    ("a = 1", '{"application-properties": ', "MESSAGE: invalid JSON"),
    ("a = 1", '{"nosuch": {}}', "not a message"),
    ("a = 1", "/no/such/file", "cannot read"),
])
def test_why_bad_filter_or_message_exit_2(capsys, filter_text, message, fragment):
    code, _, err = run(capsys, "why", filter_text, message)
    assert code == 2 and fragment in err


def test_why_an_unreadable_first_record(capsys, tmp_path):
    path = tmp_path / "cut.amqp"
    path.write_bytes(ORDERS_AMQP.read_bytes()[:100])
    code, _, err = run(capsys, "why", "a = 1", path)
    assert code == 2 and "frame 1 at byte 0: truncated frame" in err


# --- the installed command ------------------------------------------------------------------------

def test_console_script_and_python_m():
    script = Path(sys.executable).parent / "filtex"
    if not script.exists():
        pytest.skip("the console script is not installed (pip install -e .)")
    done = subprocess.run([str(script), "check", "a = 1"], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "ok: sql filter, amqp dialect\n")
    done = subprocess.run([sys.executable, "-m", "filtex", "match", "--count", EU_BIG,
                           str(ORDERS_AMQP)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and table(done.stdout) == {"filter": ["21", "29", "0"]}
    done = subprocess.run([sys.executable, "-m", "filtex", "check", "a ="],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "line 1, column 4" in done.stderr


def test_python_m_match_into_a_closed_pipe(tmp_path):
    """`filtex match ... | head -1`: the reader going away is no error."""
    command = (f"{sys.executable} -m filtex match \"region = 'EU'\" {ORDERS_JSONL} | head -1")
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    assert done.stdout.count("\n") == 1 and "Traceback" not in done.stderr


# --- found in review: options anywhere, inputs never overwritten, no tracebacks ---------------

def test_match_options_may_follow_the_filter_and_sit_between_inputs(capsys):
    code, out, _ = run(capsys, "match", EU_BIG, "--count", ORDERS_JSONL, "--format", "jsonl")
    assert code == 0 and table(out)["filter"][0] == "21"


def test_match_never_writes_over_an_input_under_another_name(capsys, tmp_path):
    original = tmp_path / "c.jsonl"
    original.write_bytes(ORDERS_JSONL.read_bytes())
    link = tmp_path / "h.jsonl"
    link.hardlink_to(original)
    code, _, err = run(capsys, "match", "TRUE", original, "-o", link)
    assert code == 2 and "would overwrite an input" in err
    assert original.read_bytes() == ORDERS_JSONL.read_bytes()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_match_write_errors_exit_2_with_the_reason(capsys):
    code, _, err = run(capsys, "match", "TRUE", ORDERS_JSONL, "-o", "/dev/full")
    assert code == 2 and "No space left on device" in err and "Traceback" not in err


@pytest.mark.parametrize("spec", ['{"set": ' + "[" * 30000 + "]" * 30000 + "}",
                                  '{"code": ' + "1" * 5000 + ', "value": 1}'])
def test_check_hostile_filter_json_is_a_clear_error(capsys, spec):
    code, _, err = run(capsys, "check", "--filter-json", spec)
    assert code == 2 and err.startswith("filtex: error: --filter-json: cannot read the JSON")


def test_why_with_stdin_closed_or_hostile_messages(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    code, _, err = run(capsys, "why", "TRUE", "-")
    assert code == 2 and "stdin is closed" in err
    deep = '{"application-properties": {"a": ' + "[" * 30000 + "]" * 30000 + "}}"
    code, _, err = run(capsys, "why", "TRUE", deep)
    assert code == 2 and "nested too deeply" in err
    code, out, _ = run(capsys, "why", "a = 'x'", '{"application-properties": {"a": "\\ud800"}}')
    assert code == 1 and "\\ud800" in out


def test_unreadable_reasons_are_tallied_in_bounded_memory():
    from filtex.cli.report import MAX_REASONS, Unreadable
    tally = Unreadable()
    sink = io.StringIO()
    for i in range(3 * MAX_REASONS):
        tally.add(f"line {i}", f"unknown message section 'k{i}x'", sink)
    assert len(tally.reasons) == 1 and tally.count == 3 * MAX_REASONS
    for i in range(3 * MAX_REASONS):
        tally.add(f"line {i}", f"reason {chr(0x4e00 + i)}", sink)
    assert len(tally.reasons) <= MAX_REASONS + 1


def test_match_strict_refuses_a_missing_input_before_creating_outputs(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"kept\n")
    code, _, err = run(capsys, "match", "--strict", "TRUE", tmp_path / "missing.jsonl",
                       ORDERS_JSONL, "-o", out)
    assert code == 2 and "missing.jsonl: cannot read: No such file" in err
    assert out.read_bytes() == b"kept\n"


# --- message tables (Parquet, Arrow IPC) through the batch engine ------------------------------

@pytest.mark.parametrize("fmt", ["parquet", "ipc"])
def test_match_reads_message_tables_and_writes_them(capsys, tmp_path, fmt):
    fa = pytest.importorskip("filtex.arrow")
    pytest.importorskip("numba")
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq
    table = fa.read(ORDERS_JSONL)
    path = tmp_path / f"orders.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=7)   # several batches
    else:
        with ipc.new_file(path, table.schema) as writer:
            writer.write_table(table, max_chunksize=9)
    flt = filtex.compile_sql(EU_BIG)
    want = [flt.evaluate(m) for m in read_messages(ORDERS_JSONL)]
    code, out, _ = run(capsys, "match", "--count", EU_BIG, path)
    assert code == 0 and f"{want.count(True)}" in out.splitlines()[1].split()
    for invert in (False, True):
        target = tmp_path / f"out-{invert}.{fmt}"
        argv = ["match", EU_BIG, path, "-o", target] + (["--invert"] if invert else [])
        assert run(capsys, *argv)[0] == 0
        got = fa.read(target)
        assert got.num_rows == sum((w is True) != invert for w in want)
        assert fa.evaluate_batch(flt, got).to_pylist() == [
            w for w in want if (w is True) != invert]


def test_match_many_subscriptions_count_as_each_filter_alone(capsys):
    """Forty named filters matched together (``filtex.Subscriptions``): each
    one's counts are those of its filter evaluated alone, unknowns included."""
    regions = ["EU", "US", "APAC", "Mars"]
    texts = {f"r{i}": f"region = '{r}' AND total > {50 * i}" for i, r in
             enumerate(regions * 5)}
    texts.update({f"p{i}": f"p.subject LIKE 'order.{s}%'" for i, s in
                  enumerate(["c", "s", "created", "x"])})
    texts.update({"odd": "total > 'x'", "any": "express OR total < 100",
                  "nul": "coupon IS NULL", "subj": "p.subject IN ('order.created', 'x')"})
    args = ["match", "--count"]
    for name, text in texts.items():
        args += ["--filter", f"{name}={text}"]
    code, out, _ = run(capsys, *args, ORDERS_JSONL, ORDERS_AMQP)
    assert code == 0
    records = list(read_records(ORDERS_JSONL)) + list(read_records(ORDERS_AMQP))
    expected = {}
    for name, text in texts.items():
        results = [filtex.compile_sql(text).evaluate(r.message) for r in records]
        expected[name] = [str(results.count(True)), str(results.count(False)),
                          str(results.count(None))]
    assert table(out) == expected
    assert sum(int(v[0]) for v in expected.values()) > 100   # not a set that matches nothing


# --- issue 22: every failure is one line and exits 2 -------------------------------------------

BLOCKER = '''import os, sys
_BLOCKED = set(filter(None, os.environ.get("FILTEX_TEST_BLOCK", "").split(",")))
class _Blocker:
    """As if these top-level modules were not installed."""
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Blocker())
'''


def cli(*argv, env: dict | None = None, block: str = "", tmp_path: Path | None = None,
        **options) -> subprocess.CompletedProcess:
    """``python -m filtex ARGV`` in a subprocess; ``block``: modules that cannot be
    imported there (a sitecustomize on PYTHONPATH makes their import fail)."""
    environment = {**os.environ, **(env or {})}
    environment.pop("FILTEX_DEBUG", None)
    environment.update(env or {})
    if block:
        assert tmp_path is not None
        (tmp_path / "sitecustomize.py").write_text(BLOCKER)
        environment["PYTHONPATH"] = str(tmp_path)
        environment["FILTEX_TEST_BLOCK"] = block
    return subprocess.run([sys.executable, "-m", "filtex", *map(str, argv)],
                          capture_output=True, text=True, env=environment, cwd=REPO,
                          timeout=600, **options)


@pytest.fixture(scope="module")
def orders_parquet(tmp_path_factory) -> Path:
    fa = pytest.importorskip("filtex.arrow")
    import pyarrow.parquet as pq
    path = tmp_path_factory.mktemp("tables") / "orders.parquet"
    pq.write_table(fa.read(ORDERS_JSONL), path, row_group_size=7)
    return path


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The run failed with exit 2 and one line on stderr, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("filtex: error: "), done.stderr
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("block, argv, module, extra", [
    ("pyarrow", ["match", "--count", EU_BIG], "pyarrow", "arrow"),
    ("numba", ["match", "--count", EU_BIG], "numba", "arrow"),
    ("pyarrow", ["why", EU_BIG], "pyarrow", "arrow"),
    ("numba", ["why", "--first", "true", EU_BIG], "numba", "arrow"),
])
def test_a_missing_extra_is_one_line_naming_the_install_command(tmp_path, orders_parquet, block,
                                                                 argv, module, extra):
    line = one_error_line(cli(*argv, orders_parquet, block=block, tmp_path=tmp_path))
    assert f"needs {module}, which is not installed" in line
    assert f"pip install 'filtex[{extra}]'" in line and f"pip install -e '.[{extra}]'" in line


def test_message_files_need_no_extra(tmp_path):
    done = cli("match", "--count", EU_BIG, ORDERS_AMQP, block="pyarrow,numba,pyspark",
               tmp_path=tmp_path)
    assert done.returncode == 0 and table(done.stdout) == {"filter": ["21", "29", "0"]}


def test_spark_without_pyspark(tmp_path):
    line = one_error_line(cli("spark", "--count", "--filter", "a=x = 1", EXAMPLES,
                              block="pyspark", tmp_path=tmp_path))
    assert "filtex spark needs pyspark, which is not installed" in line
    assert "pip install 'filtex[spark]'" in line and "pip install -e '.[spark]'" in line


@pytest.mark.parametrize("how", ["env", "option", "option before the command"])
def test_debug_shows_the_traceback_and_still_exits_2(tmp_path, orders_parquet, how):
    argv = ["match", "--count", EU_BIG, orders_parquet]
    env = {}
    if how == "env":
        env["FILTEX_DEBUG"] = "1"
    elif how == "option":
        argv.insert(1, "--debug")
    else:
        argv.insert(0, "--debug")
    done = cli(*argv, env=env, block="pyarrow", tmp_path=tmp_path)
    assert done.returncode == 2
    assert "Traceback" in done.stderr and "ModuleNotFoundError: No module named 'pyarrow'" \
        in done.stderr
    assert done.stderr.splitlines()[-1].startswith("filtex: error: reading Parquet")


def _spark_argv() -> list:
    return ["spark", "--count", "--filter", "a=x = 1", EXAMPLES]


def test_spark_without_java(tmp_path):
    pytest.importorskip("pyspark")
    empty = tmp_path / "bin"
    empty.mkdir()
    environment = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    environment["PATH"] = str(empty)   # no java on it (python is run by its full path)
    done = subprocess.run([sys.executable, "-m", "filtex", *map(str, _spark_argv())],
                          capture_output=True, text=True, env=environment, cwd=REPO)
    line = one_error_line(done)
    assert "needs Java 17 or newer" in line and "no java on PATH and JAVA_HOME is not set" in line
    line = one_error_line(cli(*_spark_argv(), env={"JAVA_HOME": str(tmp_path)}))
    assert f"JAVA_HOME is {tmp_path}, which has no bin/java" in line


def test_spark_with_a_java_that_cannot_start(tmp_path):
    """Spark's launcher runs JAVA_HOME's java, which exits at once: one line, exit 2 (Java's
    own messages come before it)."""
    pytest.importorskip("pyspark")
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'this java cannot start' >&2\nexit 1\n")
    java.chmod(0o755)
    done = cli(*_spark_argv(), env={"JAVA_HOME": str(tmp_path)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("filtex: error: Spark could not start: its Java process exited")


def test_an_unexpected_error_is_one_line_unless_debugging(capsys, monkeypatch):
    import filtex.lint

    def broken(flt):
        raise RuntimeError("the linter broke\nsecond line")
    monkeypatch.setattr(filtex.lint, "lint", broken)
    monkeypatch.delenv("FILTEX_DEBUG", raising=False)
    code, out, err = run(capsys, "check", "a = 1")
    assert code == 2 and out == ""
    assert err == ("filtex: error: unexpected RuntimeError: the linter broke (--debug or "
                   "FILTEX_DEBUG=1 shows the traceback)\n")
    code, _, err = run(capsys, "check", "--debug", "a = 1")
    assert code == 2 and "Traceback" in err and "in broken" in err
    monkeypatch.setenv("FILTEX_DEBUG", "1")
    code, _, err = run(capsys, "check", "a = 1")
    assert code == 2 and "Traceback" in err
    monkeypatch.setenv("FILTEX_DEBUG", "0")
    assert "Traceback" not in run(capsys, "check", "a = 1")[2]


def test_interrupted_is_130_without_a_traceback(capsys, monkeypatch):
    import filtex.cli.match as match_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(match_module, "read_records", interrupted)
    code, _, err = run(capsys, "match", "TRUE", ORDERS_JSONL)
    assert (code, err) == (130, "filtex: interrupted\n")


# --- issue 22: exit codes as grep's ------------------------------------------------------------

def test_match_exit_codes_follow_grep(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run(capsys, "match", EU_BIG, ORDERS_JSONL, "-o", out)[0] == 0
    assert run(capsys, "match", "region = 'Mars'", ORDERS_JSONL, "-o", out)[0] == 1
    assert out.read_bytes() == b""
    assert run(capsys, "match", "--invert", "TRUE", ORDERS_JSONL, "-o", out)[0] == 1
    # several subscriptions: 0 when any selects a message, 1 when none does
    many = ["--filter", "mars=region = 'Mars'", "--filter", "odd=total > 'x'"]
    assert run(capsys, "match", "--count", *many, ORDERS_JSONL)[0] == 1
    assert run(capsys, "match", "--count", *many, "--filter", f"eu={EU_BIG}",
               ORDERS_JSONL)[0] == 0
    assert run(capsys, "match", *many, ORDERS_JSONL, "-o", tmp_path / "{name}.jsonl")[0] == 1
    # an error wins over a match (as grep without -q)
    assert run(capsys, "match", EU_BIG, tmp_path / "missing.jsonl", ORDERS_JSONL,
               "-o", out)[0] == 2


# --- issue 22: -o - --------------------------------------------------------------------------

def test_output_dash_is_stdout(capsysbinary, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["match", EU_BIG, str(ORDERS_JSONL), "-o", "-"]) == 0
    out, _ = capsysbinary.readouterr()
    assert out == b"\n".join(expected_raws(ORDERS_JSONL, EU_BIG)) + b"\n"
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("argv, fragment", [
    (["--count", "-o", "-", "TRUE"], "--count prints its table on stdout"),
    (["--filter", "a=TRUE", "--filter", "b=TRUE", "-o", "-"], "give -o with {name}"),
])
def test_output_dash_refused_where_it_cannot_work(capsys, argv, fragment):
    code, _, err = run(capsys, "match", *argv, ORDERS_JSONL)
    assert code == 2 and fragment in err


def test_stdout_appending_to_an_input_is_refused(tmp_path):
    copy = tmp_path / "orders.jsonl"
    copy.write_bytes(ORDERS_JSONL.read_bytes())
    with open(copy, "ab") as appended:
        done = subprocess.run([sys.executable, "-m", "filtex", "match", "TRUE", str(copy)],
                              stdout=appended, stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert done.returncode == 2 and "the input is also the output (stdout)" in done.stderr
    assert copy.read_bytes() == ORDERS_JSONL.read_bytes()


@pytest.mark.skipif(not Path("/bin/bash").exists(), reason="needs bash")
def test_match_reads_a_pipe_given_as_a_path():
    """<(cat file) is a pipe: its first bytes are not sniffed for Parquet and lost."""
    command = f"'{sys.executable}' -m filtex match --count TRUE <(cat '{ORDERS_JSONL}')"
    done = subprocess.run(["/bin/bash", "-c", command], capture_output=True, text=True,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert table(done.stdout) == {"filter": ["50", "0", "0"]}


# --- issue 22: a filter kept in a file -----------------------------------------------------------

def test_filter_file_for_check_match_and_why(capsys, tmp_path, monkeypatch):
    path = tmp_path / "eu.sql"
    path.write_text("region = 'EU'\n  AND total > 100\n")   # several lines, as kept in a file
    code, out, _ = run(capsys, "check", "-f", path)
    assert code == 0 and out.startswith("ok: sql filter")
    code, out, _ = run(capsys, "match", "--count", "--filter-file", path, ORDERS_AMQP)
    assert code == 0 and table(out) == {"filter": ["21", "29", "0"]}   # every operand an input
    code, out, _ = run(capsys, "why", "-f", path, ORDERS_JSONL)
    assert code == 1 and out.startswith("result: false")
    stdin_bytes(monkeypatch, path.read_bytes())
    assert run(capsys, "check", "-f", "-")[0] == 0


def test_filter_file_errors_name_the_file(capsys, tmp_path, monkeypatch):
    path = tmp_path / "bad.sql"
    path.write_text("region = 'EU'\n  AND h.colour > 4\n")
    code, _, err = run(capsys, "check", "-f", path)
    assert code == 2
    assert err.startswith(f"filtex: error: {path}: line 2, column 9: 'colour' is not a field")
    path.write_text("region = 'EU' AND x = NULL")
    code, _, err = run(capsys, "check", "-f", path)
    assert code == 0 and err.startswith(f"filtex: warning: {path}: line 1, column 23: x = NULL")
    code, _, err = run(capsys, "check", "-f", tmp_path / "missing.sql")
    assert code == 2 and "missing.sql: cannot read: No such file or directory" in err
    code, _, err = run(capsys, "check", "-f", ORDERS_AMQP)
    assert code == 2 and "not UTF-8 text" in err and "is it a message file?" in err
    code, _, err = run(capsys, "check", "-f", path, "a = 1")
    assert code == 2 and "FILTER or -f FILE, not both" in err
    code, _, err = run(capsys, "match", "-f", path, "--filter", "a=TRUE", ORDERS_JSONL)
    assert code == 2 and "not both" in err
    stdin_bytes(monkeypatch, b"TRUE")
    code, _, err = run(capsys, "match", "-f", "-")
    assert code == 2 and "-f - reads the filter from stdin" in err


# --- issue 22: bound parameters ------------------------------------------------------------------

def test_param_is_a_string_and_param_json_a_typed_value(capsys):
    text = "region = @r AND total > @t"
    code, out, _ = run(capsys, "match", "--count", text, ORDERS_JSONL, "--param", "r=EU",
                       "--param-json", "t=100")
    assert code == 0 and table(out) == {"filter": ["21", "29", "0"]}
    # --param t=100 is the string '100': comparing a float with it fails (unknown)
    code, out, _ = run(capsys, "match", "--count", "total > @t", ORDERS_JSONL, "--param", "t=100")
    assert code == 1 and table(out) == {"filter": ["0", "0", "50"]}
    decimal = '{"@type": "decimal64", "value": "100"}'
    code, out, _ = run(capsys, "match", "--count", "total > @t", ORDERS_JSONL,
                       "--param-json", f"t={decimal}")
    assert code == 0 and table(out)["filter"][0] == str(sum(
        1 for m in read_messages(ORDERS_JSONL)
        if filtex.compile_sql("total > 100.0").evaluate(m)))
    code, _, _ = run(capsys, "check", "--param-json", "n=null", "--param", "@s=x",
                     "a = @n OR b = @s")
    assert code == 0


@pytest.mark.parametrize("argv, fragment", [
    (["a = 1", "--param", "x=1"], "parameter @x is not used in the filter"),
    (["a = @x"], "a parameter needs"),
    (["a = @x", "--param", "y=1"], "no value is given for parameter @x"),
    (["a = @x", "--param", "x"], "--param takes NAME=VALUE"),
    (["a = @x", "--param", "x=1", "--param-json", "x=2"], "'x' is given twice"),
    (["a = @x", "--param-json", "x=[1"], "--param-json x: invalid JSON"),
    (["a = @x", "--param-json", 'x={"@type": "timestamp", "value": 5}'],
     "--param-json: parameter @x: a timestamp value cannot be bound"),
    (["a = @x", "--param", "1x=a"], "malformed parameter name"),
    (['{"described": "amqp:application-properties-filter", "value": {"a": "b"}}',
      "--filter-json", "--param", "x=1"], "a described filter or a filter set has none"),
])
def test_bad_parameters_exit_2(capsys, argv, fragment):
    code, _, err = run(capsys, "check", *argv)
    assert code == 2 and fragment in err


def test_params_go_to_the_subscriptions_that_use_them(capsys):
    code, out, _ = run(capsys, "match", "--count", "--filter", "eu=region = @r",
                       "--filter", "big=total > @t", "--filter", "all=TRUE", "--param", "r=EU",
                       "--param-json", "t=100", ORDERS_JSONL)
    expected = {}
    for name, text in (("eu", "region = 'EU'"), ("big", "total > 100"), ("all", "TRUE")):
        results = [filtex.compile_sql(text).evaluate(m) for m in read_messages(ORDERS_JSONL)]
        expected[name] = [str(results.count(v)) for v in (True, False, None)]
    assert code == 0 and table(out) == expected
    code, _, err = run(capsys, "match", "--count", "--filter", "eu=region = @r",
                       "--param", "r=EU", "--param", "unused=1", ORDERS_JSONL)
    assert code == 2 and "--param unused: no filter uses @unused" in err


# --- issue 22: -q ------------------------------------------------------------------------------

def test_quiet_writes_nothing_and_answers_by_the_exit_status(capsys, tmp_path):
    assert run(capsys, "match", "-q", EU_BIG, ORDERS_JSONL) == (0, "", "")
    assert run(capsys, "match", "--quiet", "region = 'Mars'", ORDERS_JSONL) == (1, "", "")
    assert run(capsys, "match", "-q", "--invert", "TRUE", ORDERS_JSONL) == (1, "", "")
    assert run(capsys, "match", "-q", "--filter", "a=region = 'Mars'", "--filter", f"b={EU_BIG}",
               ORDERS_AMQP) == (0, "", "")
    # a match found exits 0 even after an error (grep -q); no match after one exits 2
    code, _, err = run(capsys, "match", "-q", EU_BIG, tmp_path / "missing", ORDERS_JSONL)
    assert code == 0 and "missing: cannot read" in err
    assert run(capsys, "match", "-q", "region = 'Mars'", tmp_path / "missing",
               ORDERS_JSONL)[0] == 2


def test_quiet_stops_at_the_first_match(capsys, tmp_path):
    path = tmp_path / "long.jsonl"
    good = ORDERS_JSONL.read_bytes()
    path.write_bytes(good * 4 + b"not json\n" * 10)   # 200 messages, then garbage
    assert run(capsys, "match", "-q", EU_BIG, path) == (0, "", "")   # garbage never read
    code, _, err = run(capsys, "match", "--count", EU_BIG, path)
    assert code == 2 and "not json" not in err and "10 unreadable records" in err


def test_quiet_answers_a_pipe_at_the_first_match():
    """The writer keeps its end open: filtex -q must exit on the first matching message
    without waiting for more input (or for a batch to fill)."""
    proc = subprocess.Popen([sys.executable, "-m", "filtex", "match", "-q", "region = 'EU'"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO)
    try:
        proc.stdin.write(b'{"application-properties": {"region": "US"}}\n'
                         b'{"application-properties": {"region": "EU"}}\n')
        proc.stdin.flush()
        assert proc.wait(timeout=120) == 0
        assert proc.stdout.read() == b"" and proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("fmt", ["jsonl", "amqp"])
def test_a_live_stream_shows_each_match_as_it_comes(fmt):
    """``tail -f log | filtex match F``: a match is written when it arrives, not
    when a batch of 64 has filled or the writer closes its end (as grep)."""
    from filtex.amqp.encode import encode_message
    from filtex.files import write_record

    def record(region):
        if fmt == "jsonl":
            return json.dumps({"application-properties": {"region": region}}).encode() + b"\n"
        out = io.BytesIO()
        write_record(out, bytes(encode_message(filtex.Message(
            application_properties={"region": region}))), "amqp")
        return out.getvalue()
    proc = subprocess.Popen([sys.executable, "-m", "filtex", "match", "region = 'EU'"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO)
    try:
        for region in ("US", "EU", "US", "EU"):
            proc.stdin.write(record(region))
            proc.stdin.flush()
            if region == "EU":   # the writer keeps its end open: the match must come out now
                want = record("EU")
                got = b""
                while len(got) < len(want):
                    ready, _, _ = select.select([proc.stdout], [], [], 120)
                    assert ready, "no output while the input stays open"
                    got += os.read(proc.stdout.fileno(), len(want) - len(got))
                assert got == want
        proc.stdin.close()
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("extra", [["--count"], ["-o", "x.jsonl"], ["--json"]])
def test_quiet_refuses_output_options(capsys, extra):
    code, _, err = run(capsys, "match", "-q", *extra, "TRUE", ORDERS_JSONL)
    assert code == 2 and "-q writes nothing" in err


# --- issue 22: --json counts --------------------------------------------------------------------

def test_count_json_is_one_object(capsys):
    code, out, err = run(capsys, "match", "--count", "--json", "--filter", f"eu={EU_BIG}",
                         "--filter", "odd=total > 'x'", ORDERS_JSONL, ORDERS_AMQP)
    assert code == 0
    counts = json.loads(out)
    assert counts["messages"] == 100 and counts["unreadable"] == 0
    assert list(counts["subscriptions"]) == ["eu", "odd"]
    assert counts["subscriptions"]["eu"] == {"matched": 42, "not_matched": 58, "unknown": 0,
                                             "unknown_reasons": {}}
    odd = counts["subscriptions"]["odd"]
    assert (odd["matched"], odd["unknown"]) == (0, 100)
    assert odd["unknown_reasons"] == {"cannot compare floating-point with string": 100}
    assert "odd: 100 unknown results" in err   # the report stays on stderr
    code, _, err = run(capsys, "match", "--json", "TRUE", ORDERS_JSONL)
    assert code == 2 and "give --count too" in err


# --- issue 22: why --index / --first ----------------------------------------------------------

def first_with(path: Path, text: str, result) -> int:
    flt = filtex.compile_sql(text)
    return next(n for n, m in enumerate(read_messages(path), 1) if flt.evaluate(m) is result)


@pytest.mark.parametrize("path", [ORDERS_JSONL, ORDERS_AMQP])
def test_why_index_explains_the_nth_message(capsys, path):
    messages = list(read_messages(path))
    positions = [record.position for record in read_records(path)]
    flt = filtex.compile_sql(EU_BIG)
    for n in (1, 2, 50):
        code, out, _ = run(capsys, "why", "--index", n, EU_BIG, path)
        lines = out.splitlines()
        assert lines[0] == f"message {n} ({positions[n - 1]})"
        assert lines[1].startswith("result: ")
        assert "\n".join(lines[2:]) == str(flt.explain(messages[n - 1]))
        assert code == (0 if flt.evaluate(messages[n - 1]) is True else 1)
    code, _, err = run(capsys, "why", "--index", 51, EU_BIG, path)
    assert code == 2 and "no message 51 (it has 50)" in err


@pytest.mark.parametrize("result, word", [(True, "true"), (False, "false"), (None, "unknown")])
def test_why_first_finds_the_first_message_of_a_result(capsys, result, word):
    text = f"{EU_BIG} OR coupon = 'x'"   # message 1 is unknown, 3 false, 9 true
    want = first_with(ORDERS_JSONL, text, result)
    outcome = filtex.compile_sql(text).outcome(list(read_messages(ORDERS_JSONL))[want - 1])
    code, out, _ = run(capsys, "why", "--first", word, text, ORDERS_JSONL)
    assert out.splitlines()[:2] == [f"message {want} (line {want})", f"result: {word}"
                                    + (f" ({outcome.reason})" if outcome.reason else "")]
    assert code == (0 if result is True else 1)


def test_why_first_that_finds_nothing(capsys, monkeypatch, tmp_path):
    code, out, err = run(capsys, "why", "--first", "true", "region = 'Mars'", ORDERS_JSONL)
    assert (code, out) == (1, "")
    assert "no message's result is true (50 read)" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not json\n" + ORDERS_JSONL.read_bytes())
    code, _, err = run(capsys, "why", "--first", "true", "region = 'Mars'", bad)
    assert code == 2 and "line 1: invalid JSON" in err and "(skipped)" in err
    code, out, _ = run(capsys, "why", "--first", "true", "region = 'EU'", bad)
    want = 1 + first_with(ORDERS_JSONL, "region = 'EU'", True)
    assert code == 0 and out.startswith(f"message {want} (line {want})")
    code, _, err = run(capsys, "why", "--index", 1, "TRUE", bad)
    assert code == 2 and "line 1: invalid JSON" in err
    stdin_bytes(monkeypatch, ORDERS_AMQP.read_bytes())
    want = first_with(ORDERS_AMQP, EU_BIG, True)
    code, out, _ = run(capsys, "why", "--first", "true", EU_BIG, "-")
    assert code == 0 and out.startswith(f"message {want} (frame {want} at byte")


@pytest.mark.parametrize("argv, fragment", [
    (["--index", "2", "TRUE", "{}"], "pick a message of a file"),
    (["--index", "0", "TRUE", "-"], "the first message is 1"),
    (["--index", "2", "--first", "true", "TRUE", "-"], "not allowed with"),
    (["TRUE"], "why takes FILTER MESSAGE"),
])
def test_why_bad_picks_exit_2(capsys, argv, fragment):
    try:
        code = main(["why", *argv])
    except SystemExit as raised:
        code = raised.code
    assert code == 2 and fragment in capsys.readouterr().err


def test_why_reads_tables(capsys, orders_parquet):
    pytest.importorskip("numba")
    messages = list(read_messages(ORDERS_JSONL))
    flt = filtex.compile_sql(EU_BIG)
    code, out, _ = run(capsys, "why", "--index", 9, EU_BIG, orders_parquet)
    assert out.splitlines()[0] == "message 9 (row 9)"
    assert out.splitlines()[1] == "result: " + {True: "true", False: "false"}[
        flt.evaluate(messages[8])]
    want = first_with(ORDERS_JSONL, EU_BIG, True)
    code, out, _ = run(capsys, "why", "--first", "true", EU_BIG, orders_parquet)
    assert code == 0 and out.splitlines()[:2] == [f"message {want} (row {want})", "result: true"]


# --- issue 22: flat tables in match ------------------------------------------------------------

@pytest.fixture(scope="module")
def flat_parquet(tmp_path_factory):
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("numba")
    import pyarrow.parquet as pq
    rows = [{"area": ["EU", "US", None][i % 3], "amount": [5.0, 150.0, None, 120.0][i % 4],
             "prio": [1, 5, 9][i % 3]} for i in range(40)]
    schema = pa.schema([("area", pa.string()), ("amount", pa.float64()), ("prio", pa.uint8())])
    path = tmp_path_factory.mktemp("flat") / "flat.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=16)
    return path, rows


def flat_messages(rows: list[dict], nulls: str = "absent") -> list:
    from proton import ubyte
    return [filtex.Message(header={"priority": ubyte(r["prio"])}, application_properties={
        key: r[column] for column, key in (("area", "region"), ("amount", "total"))
        if r[column] is not None or nulls == "null"}) for r in rows]


MAPPING = ["--mapping", "area=region", "--mapping", "amount=total",
           "--mapping", "prio=header:priority"]


def test_match_flat_parquet_with_a_mapping(capsys, tmp_path, flat_parquet):
    import pyarrow.parquet as pq
    path, rows = flat_parquet
    text = "region = 'EU' AND total > 100 OR h.priority > 8"
    results = [filtex.compile_sql(text).evaluate(m) for m in flat_messages(rows)]
    code, out, _ = run(capsys, "match", "--count", text, path, *MAPPING)
    assert code == 0 and table(out)["filter"] == [
        str(results.count(True)), str(results.count(False)), str(results.count(None))]
    out_path = tmp_path / "selected.parquet"
    assert run(capsys, "match", text, path, *MAPPING, "-o", out_path)[0] == 0
    written = pq.read_table(out_path)
    assert written.schema.names == ["area", "amount", "prio"]   # the input's own columns
    assert written.to_pylist() == [r for r, v in zip(rows, results) if v is True]
    # null cells: absent by default, present and null with --nulls null
    exists = "EXISTS(region)"
    present = [filtex.compile_sql(exists).evaluate(m) for m in flat_messages(rows, "null")]
    code, out, _ = run(capsys, "match", "--count", exists, path, *MAPPING, "--nulls", "null")
    assert table(out)["filter"][0] == str(present.count(True)) == "40"
    code, out, _ = run(capsys, "match", "--count", exists, path, *MAPPING)
    assert table(out)["filter"][0] == str(sum(r["area"] is not None for r in rows))


def test_mapping_where_it_cannot_apply(capsys, flat_parquet, orders_parquet):
    path, _ = flat_parquet
    code, _, err = run(capsys, "match", "--count", "TRUE", orders_parquet, *MAPPING)
    assert code == 2 and "--mapping is for flat tables, and this is a filtex message table" in err
    code, _, err = run(capsys, "match", "--count", "TRUE", ORDERS_JSONL, *MAPPING)
    assert code == 2 and "skipped: --mapping is for Parquet and Arrow IPC tables" in err
    code, _, err = run(capsys, "match", "--count", "TRUE", path, "--mapping", "nosuch=x")
    assert code == 2 and "mapping names column 'nosuch'" in err
    code, _, err = run(capsys, "match", "--count", "TRUE", path, "--mapping", "a=header:nosuch")
    assert code == 2 and "header has no field 'nosuch'" in err


# --- issue 22: the progress line's share and time left -------------------------------------------

def test_progress_shows_the_share_read_and_the_time_left():
    terminal = Terminal()
    progress = Progress(terminal)
    progress.fraction = lambda: 0.25
    progress.start -= 30   # 30 s in, a quarter read: 1:30 left
    progress.next_draw = 0
    progress.update(1000, 3, 0)
    assert terminal.getvalue().rstrip().endswith("25%  1:30 left")
    progress.fraction = lambda: None   # an input of unknown size (a pipe)
    progress.next_draw = 0
    progress.update(2000, 3, 0)
    assert "left" not in terminal.getvalue().rsplit("\r", 1)[-1]


@pytest.mark.parametrize("fixture", ["regular", "parquet"])
def test_match_progress_share_by_bytes_or_rows(capsys, monkeypatch, request, fixture):
    import filtex.cli.progress as progress_module
    path = ORDERS_JSONL if fixture == "regular" else request.getfixturevalue("orders_parquet")
    monkeypatch.setattr(progress_module, "REFRESH", 0)   # draw after every batch
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["match", "--count", EU_BIG, str(path)]) == 0
    shares = re.findall(r"(\d+)%  \d+:\d\d left", terminal.getvalue())
    if fixture == "regular":   # one chunk read holds the whole small file
        assert shares and shares[-1] == "100"
    else:                      # row groups of 7 rows: 7/50 = 14%, 28%, ...
        assert shares[:3] == ["14", "28", "42"] and shares[-1] == "100"


# --- issue 22: a filter forgotten ----------------------------------------------------------------

def test_check_warns_when_the_filter_is_a_file_name(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    code, out, err = run(capsys, "check", "examples/orders.jsonl")
    assert code == 0 and "(1 warning)" in out
    assert "did you forget the filter? 'examples/orders.jsonl' looks like a file name" in err
    monkeypatch.chdir(tmp_path)
    (tmp_path / "color").write_text("")
    code, out, err = run(capsys, "check", "color")   # a fine filter, and a file here
    assert code == 0 and "did you forget the filter? 'color' is a file" in err
    (tmp_path / "a b.txt").write_text("")
    code, _, err = run(capsys, "check", "a b.txt")   # no filter at all: the error says so too
    assert code == 2 and "did you forget the filter? 'a b.txt' is a file" in err


def test_match_warns_when_its_only_operand_is_a_file(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    stdin_bytes(monkeypatch, b"")
    code, _, err = run(capsys, "match", "examples/orders.jsonl")
    assert code == 1
    assert err.startswith("filtex: warning: FILTER 'examples/orders.jsonl' is not an input: "
                          "with no INPUT the messages are read from stdin; did you forget the "
                          "filter?")
    stdin_bytes(monkeypatch, b"")
    assert "warning" not in run(capsys, "match", "TRUE")[2]


def test_reasons_must_be_a_count(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["match", "--reasons", "-1", "TRUE"])
    assert raised.value.code == 2 and "a count is 0 or more" in capsys.readouterr().err


# --- issue 23: a malformed row of a table never costs the others their verdicts ----------------

def _table_with_a_malformed_row(path: Path) -> list:
    """Three record batches of four rows; row 2 holds a list whose encoded
    bytes do not decode. The messages, for the expected verdicts."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.ipc as ipc

    import filtex.arrow as fa
    messages = [filtex.Message(application_properties={"x": [1, 2] if i % 4 == 1 else i})
                for i in range(12)]
    table = fa.message_table(messages)
    props = table.column("application_properties").combine_chunks()
    x = props.field("x")
    encoded = x.field("e").to_pylist()
    encoded[1] = b"\xff\xff"   # an unknown constructor
    x = pa.StructArray.from_arrays([x.field("t"), x.field("i"), pa.array(encoded, pa.binary())],
                                   names=["t", "i", "e"])
    props = pa.StructArray.from_arrays([x], names=["x"])
    table = pa.Table.from_arrays([props if n == "application_properties" else table.column(n)
                                  for n in table.schema.names], schema=table.schema)
    with ipc.new_file(path, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=4):
            writer.write_batch(batch)
    return messages


@pytest.mark.slow
def test_a_malformed_row_is_unknown_and_the_rest_of_the_table_is_read(capsys, tmp_path):
    _table_with_a_malformed_row(tmp_path / "t.arrow")
    code, out, err = run(capsys, "match", "--count", "--json", "x = 4 OR x = 9 OR x = 11",
                         tmp_path / "t.arrow")
    counts = json.loads(out)
    assert counts["messages"] == 12 and counts["unreadable"] == 0
    sub = counts["subscriptions"]["filter"]
    assert (sub["matched"], sub["not_matched"], sub["unknown"]) == (2, 7, 3)   # 4 and 11
    assert any(r.startswith("malformed row") for r in sub["unknown_reasons"]), sub
    assert code == 0
    code, _, err = run(capsys, "match", "x = 4 OR x = 11", tmp_path / "t.arrow",
                       "-o", tmp_path / "out.arrow")
    import pyarrow.ipc as ipc
    kept = ipc.open_file(tmp_path / "out.arrow").read_all()
    assert code == 0 and kept.num_rows == 2   # the last batch was evaluated and written


def test_a_batch_the_engine_cannot_evaluate_is_isolated_row_by_row(capsys, tmp_path,
                                                                   monkeypatch):
    """Should the engine ever fail on a batch, its rows are evaluated one by one:
    the failing row is reported as unreadable (exit 2), every other row counted."""
    _table_with_a_malformed_row(tmp_path / "t.arrow")
    import filtex.arrow as fa
    real = fa.evaluate

    def failing(flt, batch, *args, **kwargs):   # fails on any batch holding the 7th row
        ids = [m for m in batch.column("application_properties").to_pylist()]
        if any(isinstance(m, dict) and (m.get("x") or {}).get("i") == 6 for m in ids):
            raise RuntimeError("simulated engine failure")
        return real(flt, batch, *args, **kwargs)
    monkeypatch.setattr(fa, "evaluate", failing)
    code, out, err = run(capsys, "match", "--count", "--json", "x >= 0", tmp_path / "t.arrow")
    counts = json.loads(out)
    assert counts["messages"] == 12 and counts["unreadable"] == 1
    assert counts["subscriptions"]["filter"]["matched"] == 8   # 9 ints, one of them failed
    assert "row 7: cannot evaluate this row: simulated engine failure" in err
    assert code == 2
