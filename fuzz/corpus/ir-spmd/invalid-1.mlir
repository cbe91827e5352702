part.mesh @mesh = <["tp"=2, "tp"=4]>
