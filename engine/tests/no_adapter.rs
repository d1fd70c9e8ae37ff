//! A machine without a GPU driver: `Device::gpu` explains what was looked for and how to
//! fix it, and `Device::best` falls back to the CPU with a one-line notice. Never a panic.
//!
//! The GPU is opened once per process, so the driverless case runs in a child process of
//! this test with Vulkan's driver list pointed at nothing (`VK_ICD_FILENAMES`).

use std::process::Command;

use engine::{Device, DeviceError};

const CHILD: &str = "ENGINE_NO_ADAPTER_CHILD";
const TEST: &str = "without_a_driver_the_gpu_explains_itself_and_best_falls_back";

#[test]
fn without_a_driver_the_gpu_explains_itself_and_best_falls_back() {
    if !cfg!(feature = "wgpu") {
        // A CPU-only build says how to get a GPU backend, and best() is quietly the CPU.
        let error = Device::gpu().unwrap_err();
        assert_eq!(error, DeviceError::NotCompiled);
        assert!(
            error.to_string().contains("--features engine/wgpu"),
            "{error}"
        );
        assert_eq!(Device::best(), Device::Cpu);
        return;
    }
    if std::env::var_os(CHILD).is_some() {
        let error = Device::gpu().unwrap_err();
        assert!(matches!(error, DeviceError::NoAdapter { .. }), "{error:?}");
        let text = error.to_string();
        for needle in [
            "no GPU adapter found",
            "Vulkan",
            "mesa-vulkan-drivers",
            "Device::Cpu",
        ] {
            assert!(text.contains(needle), "{needle:?} missing from: {text}");
        }
        assert_eq!(Device::best(), Device::Cpu);
        assert_eq!(Device::named("best").unwrap(), Device::Cpu);
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env("VK_DRIVER_FILES", "/nonexistent.json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the driverless child failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
    assert!(
        stderr.contains("note: running on the CPU: no GPU adapter was found"),
        "Device::best gave no notice:\n{stderr}"
    );
}

#[test]
fn device_names_parse_and_unknown_ones_are_refused() {
    assert_eq!("cpu".parse::<Device>().unwrap(), Device::Cpu);
    assert_eq!(Device::named(" CPU ").unwrap(), Device::Cpu);
    let error = Device::named("cuda").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown device \"cuda\": expected cpu, gpu or best"
    );
}
