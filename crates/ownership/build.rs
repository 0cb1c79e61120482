//! Build script: with the `napi` feature, rebuild when the addon's build asks
//! for the TypeScript declarations of the views (napi-build says when).

fn main() {
    #[cfg(feature = "napi")]
    napi_build::setup();
}
