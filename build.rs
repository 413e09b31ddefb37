//! Embeds the icon and the version information in the Windows executable. Other targets need
//! nothing: the window icon is set at start-up from `assets/icons`.

fn main() {
    println!("cargo:rerun-if-changed=assets/memsight.ico");
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    let mut res = winresource::WindowsResource::new();
    res.set_icon("assets/memsight.ico")
        .set("ProductName", "memsight")
        .set(
            "FileDescription",
            "memsight: Ascend NPU memory profile viewer",
        )
        .set("LegalCopyright", "memsight developers, MIT OR Apache-2.0");
    // Without windres (no mingw), the build still works: the .exe just has no icon.
    if let Err(e) = res.compile() {
        println!("cargo:warning=Windows resources not embedded: {e}");
    }
}
