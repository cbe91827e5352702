part.mesh @mesh = <["dp"=4096, "tp"=4096, "pp"=2]>
