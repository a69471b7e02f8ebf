"""A broker with TLS and passwords: the table and the hall connect with both; a wrong password is a visible fault."""

import shutil
import subprocess
import time

import pytest

from companion.mqtt.hall import HallBoard
from tests.mqtt.conftest import HALL, Broker, wait_until


def run(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def secure_broker(mosquitto_bin, tmp_path):
    openssl = shutil.which("openssl")
    passwd = shutil.which("mosquitto_passwd")
    if openssl is None or passwd is None:
        pytest.skip("openssl and mosquitto_passwd are needed to make a TLS broker with passwords")
    d = tmp_path / "pki"
    d.mkdir()
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    run(openssl, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Test hall CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    run(openssl, "req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=d)
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                                  "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                                  "authorityKeyIdentifier=keyid\n")
    run(openssl, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "server.ext", cwd=d)
    run(passwd, "-b", "-c", str(d / "passwords"), "table", "right-horse", cwd=d)
    b = Broker(mosquitto_bin, tmp_path / "broker", anonymous=False, extra=(
        f"cafile {d / 'ca.pem'}", f"certfile {d / 'server.pem'}", f"keyfile {d / 'server.key'}",
        f"password_file {d / 'passwords'}"))
    b.start()
    b.ca = d / "ca.pem"
    yield b
    b.stop()


def test_tls_and_password(secure_broker, tables, tmp_path):
    ca = str(secure_broker.ca)
    t = tables(secure_broker.port, "t1", ca_file=ca, username="table", password="right-horse")
    wrong = tables(secure_broker.port, "t2", ca_file=ca, username="table", password="wrong")
    board = HallBoard("127.0.0.1", secure_broker.port, HALL, username="table", password="right-horse", tls=True,
                      ca_file=ca, reconnect_min_s=0.1, reconnect_max_s=0.5)
    board.start()
    try:
        assert t.publisher.config.tls and t.publisher.config.port == secure_broker.port
        wait_until(lambda: t.publisher.status()["state"] == "connected", what="the TLS table connected")
        t.host.act({"type": "roll", "value": 4})
        wait_until(lambda: [r for r in board.snapshot()["tables"] if r["seq"] == t.host.seq], what="the hall sees it")
        # a wrong password: refused, said on the page, and the game goes on regardless
        error = wait_until(lambda: wrong.publisher.status()["last_error"], what="the refusal")
        assert "refused the connection: Not authorized" in error
        started = time.monotonic()
        wrong.host.act({"type": "roll", "value": 2})
        assert time.monotonic() - started < 2.0 and wrong.publisher.status()["state"] != "connected"
        assert {r["table"] for r in board.snapshot()["tables"]} == {"t1"}
    finally:
        board.stop()


def test_a_broker_with_another_ca_is_refused_by_the_table(secure_broker, tables, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    run(shutil.which("openssl"), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "o.key", "-out", "o.pem", "-days", "2", "-subj", "/CN=Someone else", cwd=other)
    t = tables(secure_broker.port, "t1", ca_file=str(other / "o.pem"), username="table", password="right-horse")
    error = wait_until(lambda: t.publisher.status()["last_error"], what="the TLS failure")
    assert "CERTIFICATE_VERIFY_FAILED" in error and t.publisher.status()["state"] != "connected"
