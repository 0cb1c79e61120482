pub const STAMP: &str = "initial";
