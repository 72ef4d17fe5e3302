pub fn check(_: &super::Context) -> super::Outcome {
    super::Outcome::na("not_implemented")
}
