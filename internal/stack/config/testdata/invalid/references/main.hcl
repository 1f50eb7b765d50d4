variable "x" {
  default = 1
}

locals {
  bad = release.a.name
}

release "a" {
  chart = "./charts/a"
  name  = "a-${each.key}-${count.index}"
  values = [{ x = foo.bar, y = var }]
  cluster = cluster.prod
}
