export async function makeBlank() {
  return []
}
