#[test]
fn prints_its_stamp() {
    println!("stamp={}", pool_bench_app::stamp());
}
