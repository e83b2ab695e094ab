"""The filtex command line: check, match, why; exit codes; the console script."""
from __future__ import annotations

import io
import json
import os
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
