//! Stand-ins for the N-API functions the library crates' views reach, for
//! this crate's unit tests alone.
//!
//! With their `napi` feature the library crates register their enums with
//! the module from constructors that run when a binary loads, and those
//! reach N-API's object functions. Node provides them to the addon; a unit
//! test binary runs without Node, so it would not link. No unit test calls
//! into N-API: each stand-in aborts if one ever does.

use std::ffi::c_void;

/// Stops the test binary: an N-API function ran outside Node.
fn outside_node(name: &str) -> ! {
    eprintln!("{name} called in a unit test: N-API exists only inside Node");
    std::process::abort()
}

#[unsafe(no_mangle)]
extern "C" fn napi_create_object(_env: *mut c_void, _result: *mut c_void) -> i32 {
    outside_node("napi_create_object")
}

#[unsafe(no_mangle)]
extern "C" fn napi_create_string_utf8(
    _env: *mut c_void,
    _text: *const c_void,
    _length: isize,
    _result: *mut c_void,
) -> i32 {
    outside_node("napi_create_string_utf8")
}

#[unsafe(no_mangle)]
extern "C" fn napi_define_properties(
    _env: *mut c_void,
    _object: *mut c_void,
    _count: usize,
    _properties: *const c_void,
) -> i32 {
    outside_node("napi_define_properties")
}
