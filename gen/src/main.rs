fn main() {
    eprintln!("fanin-gen: not implemented yet");
    std::process::exit(2);
}
