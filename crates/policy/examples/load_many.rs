//! Loads a policy N times from memory: the whole-process figure to compare (side by side) when a
//! change to the reader might slow loading down (`load_many POLICY [N]`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: load_many POLICY [N]")?;
    let n: usize = args.next().map_or(Ok(200), |s| s.parse())?;
    let bytes = std::fs::read(&path)?;
    let mut types = 0;
    for _ in 0..n {
        types += arbiter_policy::Policy::from_bytes(&bytes)?.types.len();
    }
    println!("{types}");
    Ok(())
}
