fn main() {
    // Links the N-API symbols the way a Node addon needs on every platform
    // (on macOS, resolved from the node binary at load time).
    napi_build::setup();
}
