//! The Kubernetes manifests (`deploy/k8s/`) and the Compose file (`deploy/compose.yaml`) are
//! checked against what they deploy:
//! - every Kubernetes object against the API's schema (Kubernetes 1.33, the `k8s-openapi`
//!   types): it must deserialize into its typed form and serialize back to exactly what the
//!   file says, so that a misspelt or misplaced field (which the API server would drop or
//!   refuse) fails the test;
//! - every command against the binaries: the program is `coordinator`, `worker` or `retro`,
//!   and each flag it is given is one that program's `--help` lists;
//! - the pieces against each other: a worker's memory request is its `--memory-budget`, its
//!   CPU request its `--threads`; the probes hit `/metrics` on the port of `--metrics`; the
//!   token file is in the mounted Secret; coordinator and workers mount the same volume at
//!   the `--data` path; workers reach the coordinator through the Service;
//! - `kubectl kustomize deploy/k8s` (Debian's `kubernetes-client`) builds the kustomization
//!   with the image it names, and `docker-compose config` (Debian's `docker-compose`, which
//!   needs no Docker engine for it) checks the Compose file against the Compose schema; both
//!   are installed with apt-get when missing (as root), and skipped with a message otherwise.

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;

fn deploy() -> PathBuf {
    repo_root().join("deploy")
}

/// All YAML documents of a file, as JSON values.
fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| {
            let yaml = <serde_yaml::Value as serde::Deserialize>::deserialize(doc)
                .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
            serde_json::to_value(yaml).unwrap()
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// The Kubernetes objects of deploy/k8s/ (not the kustomization), with their file.
fn k8s_objects() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(deploy().join("k8s"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "deploy/k8s holds {files:?}");
    files
        .iter()
        .flat_map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            documents(f).into_iter().map(move |d| (name.clone(), d))
        })
        .collect()
}

/// Paths where `b` differs from `a` (fields missing, added or changed).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => differences(v, w, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k} is not a field of the API")),
                }
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(format!("{path}.{k} appeared"));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{path}: {a} became {b}")),
    }
}

/// `value` through the typed form of `T` and back.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    Ok(serde_json::to_value(typed).unwrap())
}

fn schema_check(value: &Value) -> Result<Value, String> {
    use k8s_openapi::api::{apps::v1 as apps, batch::v1 as batch, core::v1 as core};
    let kind = format!(
        "{}/{}",
        value["apiVersion"].as_str().unwrap_or("?"),
        value["kind"].as_str().unwrap_or("?")
    );
    match kind.as_str() {
        "v1/Namespace" => round_trip::<core::Namespace>(value),
        "v1/PersistentVolumeClaim" => round_trip::<core::PersistentVolumeClaim>(value),
        "v1/Service" => round_trip::<core::Service>(value),
        "v1/Secret" => round_trip::<core::Secret>(value),
        "apps/v1/StatefulSet" => round_trip::<apps::StatefulSet>(value),
        "apps/v1/Deployment" => round_trip::<apps::Deployment>(value),
        "batch/v1/Job" => round_trip::<batch::Job>(value),
        other => Err(format!("no schema here for {other}")),
    }
}

#[test]
fn every_kubernetes_object_matches_the_api_schema() {
    let mut problems = Vec::new();
    for (file, object) in k8s_objects() {
        let name = format!("{file}: {}", object["metadata"]["name"]);
        match schema_check(&object) {
            Ok(back) => {
                let mut diffs = Vec::new();
                differences(&object, &back, "", &mut diffs);
                problems.extend(diffs.into_iter().map(|d| format!("{name}: {d}")));
            }
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_schema_check_catches_a_misspelt_field_and_a_wrong_type() {
    let (_, mut object) = k8s_objects()
        .into_iter()
        .find(|(_, o)| o["kind"] == "Deployment")
        .expect("a Deployment");
    let container = &mut object["spec"]["template"]["spec"]["containers"][0];
    container["resources"]["request"] = container["resources"]["requests"].clone();
    let back = schema_check(&object).unwrap();
    let mut diffs = Vec::new();
    differences(&object, &back, "", &mut diffs);
    assert_eq!(
        diffs,
        [".spec.template.spec.containers[0].resources.request is not a field of the API"]
    );
    object["spec"]["replicas"] = Value::from("two");
    assert!(schema_check(&object).is_err());
}

/// The long flags `<program> --help` lists.
fn flags_of(program: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_retro"))
        .args(program)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "retro {program:?} --help");
    String::from_utf8_lossy(&out.stdout)
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.split('=').next().unwrap().to_string())
        .collect()
}

/// Checks a command line (binary and arguments) against the binaries; returns its flags and
/// values (`--flag` → the word after it, or "" when none follows).
fn check_command(where_: &str, command: &[String]) -> BTreeMap<String, String> {
    let (program, skip): (Vec<&str>, usize) = match command.first().map(String::as_str) {
        Some("coordinator") => (vec!["coordinator"], 1),
        Some("worker") => (vec!["worker"], 1),
        Some("retro") => (vec![command[1].as_str()], 2),
        other => panic!("{where_}: runs {other:?}, not coordinator, worker or retro"),
    };
    let known = flags_of(&program);
    assert!(known.len() > 3, "{program:?} lists flags: {known:?}");
    let mut flags = BTreeMap::new();
    let args = &command[skip..];
    for (i, arg) in args.iter().enumerate() {
        if let Some(flag) = arg.strip_prefix("--") {
            let flag = flag.split('=').next().unwrap();
            assert!(
                known.contains(&format!("--{flag}")),
                "{where_}: `{}` has no flag --{flag} (it has {known:?})",
                program.join(" ")
            );
            let value = args
                .get(i + 1)
                .filter(|v| !v.starts_with("--"))
                .cloned()
                .unwrap_or_default();
            flags.insert(flag.to_string(), value);
        }
    }
    flags
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Bytes of a Kubernetes quantity ("12Gi") or a `--memory-budget` ("12GiB").
fn bytes(text: &str) -> u64 {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let n: u64 = n.parse().unwrap();
    n * match unit {
        "" | "B" => 1,
        "Ki" | "KiB" | "K" => 1 << 10,
        "Mi" | "MiB" | "M" => 1 << 20,
        "Gi" | "GiB" | "G" => 1 << 30,
        "Ti" | "TiB" | "T" => 1 << 40,
        other => panic!("unit {other} of {text}"),
    }
}

/// Port number of `port` (a number or the name of one of `container`'s ports).
fn port_number(container: &Value, port: &Value) -> u64 {
    match port {
        Value::Number(n) => n.as_u64().unwrap(),
        Value::String(name) => container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == *name)
            .unwrap_or_else(|| panic!("no port named {name}"))["containerPort"]
            .as_u64()
            .unwrap(),
        _ => panic!("port {port}"),
    }
}

fn addr_port(addr: &str) -> u64 {
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn kubernetes_commands_probes_resources_and_volumes_agree() {
    let objects = k8s_objects();
    let service = objects
        .iter()
        .find(|(_, o)| o["kind"] == "Service")
        .map(|(_, o)| o.clone())
        .expect("a Service");
    let mut seen = Vec::new();
    for (file, object) in &objects {
        let Some(pod) = (match object["kind"].as_str() {
            Some("StatefulSet" | "Deployment" | "Job") => Some(&object["spec"]["template"]),
            _ => None,
        }) else {
            continue;
        };
        let spec = &pod["spec"];
        assert_eq!(
            spec["securityContext"]["runAsNonRoot"], true,
            "{file}: runs as non-root"
        );
        for container in spec["containers"].as_array().unwrap() {
            let mut command = strings(&container["command"]);
            command.extend(strings(&container["args"]));
            let where_ = format!("{file}: container {}", container["name"]);
            let flags = check_command(&where_, &command);
            seen.push(command[0].clone());
            let mounts = container["volumeMounts"].as_array().unwrap();
            let volume_at = |path: &str| -> Value {
                let mount = mounts
                    .iter()
                    .filter(|m| path.starts_with(m["mountPath"].as_str().unwrap()))
                    .max_by_key(|m| m["mountPath"].as_str().unwrap().len())
                    .unwrap_or_else(|| panic!("{where_}: nothing mounted at {path}"));
                spec["volumes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["name"] == mount["name"])
                    .unwrap()
                    .clone()
            };
            // The token comes from the Secret.
            let token = &flags["token-file"];
            assert_eq!(
                volume_at(token)["secret"]["secretName"],
                "retro-token",
                "{where_}: --token-file {token} is in the Secret"
            );
            if let Some(data) = flags.get("data") {
                assert_eq!(
                    volume_at(data)["persistentVolumeClaim"]["claimName"],
                    "retro-data",
                    "{where_}"
                );
            }
            match command[0].as_str() {
                "coordinator" => {
                    assert_eq!(flags["data"], "/data");
                    let metrics = addr_port(&flags["metrics"]);
                    let grpc = addr_port(&flags["listen"]);
                    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
                        let get = &container[probe]["httpGet"];
                        assert_eq!(get["path"], "/metrics", "{where_}: {probe}");
                        assert_eq!(
                            port_number(container, &get["port"]),
                            metrics,
                            "{where_}: {probe} on the --metrics port"
                        );
                    }
                    // The Service routes its grpc port to --listen.
                    let svc_port = service["spec"]["ports"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["name"] == "grpc")
                        .unwrap();
                    assert_eq!(port_number(container, &svc_port["targetPort"]), grpc);
                }
                "worker" | "retro" => {
                    // The coordinator is reached through the Service.
                    let url = &flags["coordinator"];
                    let svc = service["metadata"]["name"].as_str().unwrap();
                    let svc_port = service["spec"]["ports"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["name"] == "grpc")
                        .unwrap()["port"]
                        .as_u64()
                        .unwrap();
                    assert_eq!(url, &format!("http://{svc}:{svc_port}"), "{where_}");
                    if command[0] == "worker" {
                        // The worker's data directory is the coordinator's: same volume,
                        // same path.
                        assert_eq!(
                            volume_at("/data")["persistentVolumeClaim"]["claimName"],
                            "retro-data",
                            "{where_}"
                        );
                        let requests = &container["resources"]["requests"];
                        assert_eq!(
                            bytes(requests["memory"].as_str().unwrap()),
                            bytes(&flags["memory-budget"]),
                            "{where_}: memory request = --memory-budget"
                        );
                        let limit =
                            bytes(container["resources"]["limits"]["memory"].as_str().unwrap());
                        assert!(limit >= bytes(&flags["memory-budget"]), "{where_}");
                        assert_eq!(
                            requests["cpu"].as_str().unwrap(),
                            flags["threads"],
                            "{where_}: CPU request = --threads"
                        );
                    }
                }
                _ => unreachable!(),
            }
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["coordinator", "retro", "worker"]);
}

#[test]
fn the_compose_file_runs_real_commands_with_consistent_sizes() {
    let compose = documents(&deploy().join("compose.yaml")).remove(0);
    let services = compose["services"].as_object().unwrap();
    for name in ["coordinator", "worker", "submit"] {
        assert!(services.contains_key(name), "compose.yaml has {name}");
    }
    for (name, service) in services {
        let mut command = strings(&service["entrypoint"]);
        command.extend(strings(&service["command"]));
        let flags = check_command(&format!("compose.yaml: {name}"), &command);
        for secret in strings(&service["secrets"]) {
            assert!(compose["secrets"][&secret].is_object(), "{name}: {secret}");
            assert_eq!(flags["token-file"], format!("/run/secrets/{secret}"));
        }
        for volume in strings(&service["volumes"]) {
            let source = volume.split(':').next().unwrap();
            assert!(
                source.starts_with('/') || compose["volumes"][source].is_object(),
                "{name}: volume {volume} is declared"
            );
        }
        match command[0].as_str() {
            "coordinator" => {
                let metrics = addr_port(&flags["metrics"]).to_string();
                let test = strings(&service["healthcheck"]["test"]).join(" ");
                assert!(
                    test.contains(&format!("/{metrics} ")) && test.contains("/metrics"),
                    "the health check reads /metrics on port {metrics}: {test}"
                );
                assert_eq!(flags["data"], "/data");
                assert!(strings(&service["volumes"]).contains(&"data:/data".to_string()));
            }
            "worker" => {
                assert!(strings(&service["volumes"]).contains(&"data:/data".to_string()));
                assert_eq!(
                    bytes(
                        service["deploy"]["resources"]["reservations"]["memory"]
                            .as_str()
                            .unwrap()
                    ),
                    bytes(&flags["memory-budget"]),
                    "the worker's memory reservation is its --memory-budget"
                );
                assert_eq!(flags["coordinator"], "http://coordinator:50051");
            }
            _ => assert_eq!(flags["coordinator"], "http://coordinator:50051"),
        }
    }
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `cmd` is there, or Debian's `package` is installed now (as root); `false` (with a SKIPPED
/// line naming `test`) when it cannot be.
fn installed(cmd: &str, package: &str, test: &str) -> bool {
    if have(cmd) {
        return true;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let install = format!(
        "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {package} \
         || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {package})"
    );
    let done = root
        && have("apt-get")
        && Command::new("sh")
            .args(["-c", &install])
            .output()
            .is_ok_and(|o| o.status.success())
        && have(cmd);
    if !done {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: {cmd} is missing and cannot be installed here (it needs root and \
             apt-get: Debian's {package})"
        );
    }
    done
}

#[test]
fn docker_compose_validates_the_compose_file() {
    // Debian's docker-compose (1.29) checks the file against the Compose schema without a
    // Docker engine.
    if !installed(
        "docker-compose",
        "docker-compose",
        "docker_compose_validates_the_compose_file",
    ) {
        return;
    }
    let out = Command::new("docker-compose")
        .args(["-f", "compose.yaml", "config", "--quiet"])
        .current_dir(deploy())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker-compose config: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // And it can fail: a misspelt key is refused.
    let dir = temp_dir("compose-misspelt");
    let text = std::fs::read_to_string(deploy().join("compose.yaml")).unwrap();
    assert!(text.contains("      interval: 10s\n"));
    std::fs::write(
        dir.join("compose.yaml"),
        text.replace("      interval: 10s\n", "      intervall: 10s\n"),
    )
    .unwrap();
    let out = Command::new("docker-compose")
        .args(["-f", "compose.yaml", "config", "--quiet"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("intervall"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn kubectl_builds_the_kustomization() {
    if !installed(
        "kubectl",
        "kubernetes-client",
        "kubectl_builds_the_kustomization",
    ) {
        return;
    }
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(deploy().join("k8s"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kubectl kustomize deploy/k8s: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The kustomization's image replaces every container's, and every object is there.
    let kustomization = documents(&deploy().join("k8s/kustomization.yaml")).remove(0);
    let image = &kustomization["images"][0];
    let want = format!(
        "image: {}:{}",
        image["newName"].as_str().unwrap(),
        image["newTag"].as_str().unwrap()
    );
    assert_eq!(text.matches(&want).count(), 2, "{text}");
    assert!(!text.contains("image: retro:latest"), "{text}");
    for kind in [
        "Namespace",
        "PersistentVolumeClaim",
        "StatefulSet",
        "Service",
        "Deployment",
    ] {
        assert!(text.contains(&format!("kind: {kind}\n")), "{kind}: {text}");
    }
}
