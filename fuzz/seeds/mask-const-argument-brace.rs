type C = Form<{ N }>;
async fn f() {
    for i in [1] { let s: Vec<()> = (); }
    x();
    std::thread::sleep(d);
}
