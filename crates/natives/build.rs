//! Build script: the linker arguments a Node addon needs.

fn main() {
    napi_build::setup();
}
