release "web" {
  chart       = "./charts/web"
  wait        = "sometimes"
  history_max = "ten"
}
