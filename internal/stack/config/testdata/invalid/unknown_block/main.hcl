stack "s" {}

resource "helm" "x" {
  chart = "./c"
}
