import json

import duckdb

from pipeline.contracts.digests import canonical_json, measurement_digest, measurement_digest_sql, object_digest
from pipeline.contracts.records import Bundle
from tests.conftest import SAMPLE_RECORD


def test_sample_record_digests_reproduce():
    bundle = json.loads(SAMPLE_RECORD.read_text())
    spec = bundle["run"]["spec"]
    assert object_digest(bundle["protocol"]) == spec["protocolDigest"]
    assert object_digest(bundle["environment"]) == spec["environmentDigest"]


def test_metadata_is_not_part_of_the_digest():
    bundle = json.loads(SAMPLE_RECORD.read_text())
    env = bundle["environment"]
    renamed = {**env, "metadata": {"name": "something-else"}}
    assert object_digest(renamed) == object_digest(env)
    changed = {**env, "spec": {**env["spec"], "software": {"cuda": "12.4"}}}
    assert object_digest(changed) != object_digest(env)


def test_canonical_form_is_rfc8785():
    # json.dumps would write 5.2e-05, 1e-06 and 25.0: other bytes, other digests than KernelIndex's.
    assert canonical_json({"eps": 5.2e-05, "b": 1, "a": "é"}) == '{"a":"é","b":1,"eps":0.000052}'
    assert canonical_json({"eps": 1e-6, "w": 25.0, "big": 1e21}) == '{"big":1e+21,"eps":0.000001,"w":25}'


def test_sample_validates_against_the_pydantic_models():
    bundle = Bundle.model_validate_json(SAMPLE_RECORD.read_text())
    assert bundle.run.metadata.labels["liger_version"] == "0.7.0"
    assert bundle.run.spec.sourceNative.metrics["ms_50"] == 0.12591999769210815


def test_measurement_digest_sql_matches_python():
    fields = dict(
        kernel_name="k",
        kernel_provider="liger",
        kernel_operation_mode="forward",
        metric_name="speed",
        x_name="N",
        x_value=None,
        extra_config='{"B":8}',
        gpu_name="NVIDIA B200",
        observed_at_text="2026-01-01 00:00:00",
        liger_version="0.8.0",
        p20=0.000012,
        p50=0.1,
        p80=1e21,
        occurrence=2,
    )
    types = {"p20": "double", "p50": "double", "p80": "double", "occurrence": "bigint"}
    con = duckdb.connect()
    con.execute(
        "create table t as select " + ", ".join(f"${k}::{types.get(k, 'varchar')} as {k}" for k in fields), fields
    )
    sql_digest = con.execute(f"select {measurement_digest_sql()} from t").fetchone()[0]
    assert sql_digest == measurement_digest(**fields)
    # null and empty string must not collide; the values are part of the identity
    assert measurement_digest(**{**fields, "x_value": ""}) != sql_digest
    assert measurement_digest(**{**fields, "p50": 0.10000000000000002}) != sql_digest


def test_exported_json_schemas_are_current(tmp_path):
    from pipeline.contracts.records import export_json_schemas
    from tests.conftest import PROJECT

    for path in export_json_schemas(tmp_path):
        assert (PROJECT / "schemas" / path.name).read_text() == path.read_text(), f"run `make schemas` ({path.name})"
